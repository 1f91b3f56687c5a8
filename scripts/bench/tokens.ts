/**
 * Token benchmark: how many tokens an agent reads of each recording in `fixtures/workloads/` in the raw,
 * compact and parsed views, counted with a real tokenizer (`gpt-tokenizer`, o200k_base), and whether each
 * view kept the program's meaning.
 *
 * Two counts per view. **frames**: the NDJSON an agent or client reads: raw is today's `stdout` frames (one
 * per recorded output event, with `seq` and `ts`, as `specter run` wrote them), compact and parsed are
 * `specter view --mode M` of the same recording (one view event per line). **text**: the text an agent
 * reads as a tool's `output`: raw is the output as the program wrote it, compact and parsed are
 * `specter view --mode M --text`. The meaning checks compare each view with
 * what a terminal shows, from an independent reading of the raw output (xterm.js, headless, with scrollback):
 *
 * - lines: every line of the terminal's final buffer (scrollback and screen) that matches the workload's
 *   `keep` pattern (errors, failures, warnings, summaries, final progress states) is in the view's text;
 * - pages: every row shown at each pause of a pager (every content line of paged output), and a pager
 *   prompt reported as a prompt;
 * - final screen: in a screen view (parsed), the screen rebuilt from the view's events (`screenOf`) is the
 *   terminal's last screen, row for row; in a line view (compact), every row of it is in the text.
 *
 *   deno run -A scripts/bench/tokens.ts
 *
 * Acceptance (issue 13): ≥ 70 % fewer tokens than raw overall, every check passing. Both counts and both
 * views are printed; the goal is checked on the parsed view's frames (the issue defines raw as today's frames).
 *
 * @module
 */
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import {
  PAGER_PROMPT,
  parseRecording,
  type Recording,
  renderText,
  screenOf,
  SETTLE_SECONDS,
  viewRecording,
} from "../../src/views/mod.ts";
import { loadXterm } from "../../src/terminal/mod.ts";
import type { ViewEvent } from "../../src/protocol/mod.ts";
import { finish, ROOT, round, runBenchmark, say, table } from "./_common.ts";

const ACCEPT_REDUCTION = 0.7;

/** What each workload must keep. */
interface Workload {
  readonly name: string;
  /** Lines of the terminal's final buffer that every view must keep. */
  readonly keep?: RegExp;
  /** A pager: every row shown at each pause is content (prompts aside), and a prompt must be reported. */
  readonly pages?: boolean;
  /** A full-screen program: the rows of its last screen (as left on the terminal at the end). */
  readonly finalScreen?: boolean;
}

export const WORKLOADS: readonly Workload[] = [
  { name: "npm-install", keep: /added \d+ packages?|npm (?:warn|err)|deprecated/i },
  {
    name: "apt-install",
    keep: /^(?:Get:|Fetched|Setting up|Unpacking|\d+ upgraded|E:|W:|Processing triggers)/,
  },
  { name: "pytest", keep: /FAILED|PASSED|ERROR|Error|^E |^>|=====|collected/ },
  { name: "netcli-more", pages: true },
  { name: "top", finalScreen: true },
  { name: "git-log", pages: true },
];

/** What a terminal shows: the final buffer's lines, and the screen at each pause. */
interface Truth {
  readonly lines: readonly string[];
  readonly pauses: readonly { readonly rows: readonly string[]; readonly alternate: boolean }[];
}

/** Reads the raw output with xterm.js (independently of the views). */
async function truthOf(recording: Recording): Promise<Truth> {
  const { Terminal } = await loadXterm();
  const term = new Terminal({
    cols: recording.header.width ?? 80,
    rows: recording.header.height ?? 24,
    scrollback: 100_000,
    allowProposedApi: true,
  });
  const write = (data: string) => new Promise<void>((resolve) => term.write(data, resolve));
  const rowsOf = (buffer: typeof term.buffer.active, from: number, to: number) => {
    const rows: string[] = [];
    for (let y = from; y < to; y++) rows.push(buffer.getLine(y)?.translateToString(true).trimEnd() ?? "");
    return rows;
  };
  const pauses: { rows: string[]; alternate: boolean }[] = [];
  const output = recording.events.filter((e) => e[1] === "o");
  for (const [i, [time, , data]] of output.entries()) {
    await write(data);
    const next = output[i + 1];
    if (next === undefined || next[0] - time >= SETTLE_SECONDS) {
      const active = term.buffer.active;
      pauses.push({
        rows: rowsOf(active, active.baseY, active.baseY + term.rows),
        alternate: active.type === "alternate",
      });
    }
  }
  const normal = term.buffer.normal;
  const lines = rowsOf(normal, 0, normal.length);
  term.dispose();
  return { lines, pauses };
}

interface Check {
  readonly name: string;
  readonly missing: readonly string[];
}

/** The meaning checks of one view of one workload. */
function check(workload: Workload, truth: Truth, events: readonly ViewEvent[], text: string): Check[] {
  const prompts = events.filter((e) => e.type === "prompt").length;
  const checks: Check[] = [];
  const has = (line: string) => text.includes(line.trim());
  if (workload.keep) {
    const wanted = truth.lines.filter((line) => workload.keep!.test(line));
    checks.push({ name: `${wanted.length} kept lines`, missing: wanted.filter((l) => !has(l)) });
  }
  if (workload.pages) {
    const rows = new Set(
      truth.pauses.flatMap((p) => p.rows).filter((r) => r.trim() !== "" && !PAGER_PROMPT.test(r)),
    );
    checks.push({ name: `${rows.size} paged rows`, missing: [...rows].filter((r) => !has(r)) });
    const shown = truth.pauses.filter((p) => p.rows.some((r) => PAGER_PROMPT.test(r))).length;
    checks.push({
      name: `pager prompts (${shown} pauses at one)`,
      missing: shown > 0 && prompts === 0 ? ["no prompt reported"] : [],
    });
  }
  if (workload.finalScreen) {
    const last = truth.pauses.at(-1); // A full-screen program leaves its last screen (top does).
    const want = [...(last?.rows ?? [])];
    while (want.length > 0 && want[want.length - 1] === "") want.pop();
    const got = screenOf(events);
    let wrong: string[];
    if (got === null) {
      // A line view (compact) has no screen: every row of the last screen must be in its text.
      wrong = want.filter((r) => r.trim() !== "" && !has(r));
    } else {
      // A screen view: the screen its events rebuild must be the last screen, row for row (a row that
      // appeared anywhere earlier in the text does not count).
      wrong = want.flatMap((row, i) => (got[i] ?? "") === row ? [] : [`row ${i + 1}: ${row}`]);
      if (got.length > want.length) wrong.push(`${got.length - want.length} rows too many`);
    }
    checks.push({
      name: `final screen (${want.filter((r) => r !== "").length} rows${got === null ? " in the text" : ""})`,
      missing: last === undefined ? ["no full screen seen"] : wrong,
    });
  }
  return checks;
}

async function main(): Promise<number> {
  const rows: string[][] = [["workload", "raw", "compact", "parsed"]];
  const totals = { frames: { raw: 0, compact: 0, parsed: 0 }, text: { raw: 0, compact: 0, parsed: 0 } };
  const checkLines: string[] = [];
  const pct = (n: number, of: number) => `${n} (−${round(100 * (1 - n / of), 1)} %)`;
  const failures: string[] = [];
  const results: Record<string, unknown>[] = [];
  for (const workload of WORKLOADS) {
    const file = `${ROOT}/fixtures/workloads/${workload.name}.cast`;
    const recording = parseRecording(await Deno.readTextFile(file));
    if ("problem" in recording) throw new Error(`${file} ${recording.problem}`);
    const output = recording.events.filter((e) => e[1] === "o");
    const raw = output.map((e) => e[2]).join("");
    const start = recording.header.timestamp ?? 0;
    const rawFrames = output.map(([time, , data], i) =>
      JSON.stringify({ seq: i + 1, ts: Math.round((start + time) * 1e6) / 1e6, type: "stdout", data }) + "\n"
    ).join("");
    const truth = await truthOf(recording);
    const counts = { raw: countTokens(raw), compact: 0, parsed: 0 };
    const frames = { raw: countTokens(rawFrames), compact: 0, parsed: 0 };
    const verdicts: string[] = [];
    for (const mode of ["compact", "parsed"] as const) {
      const events = await viewRecording(recording, mode);
      const text = renderText(events);
      counts[mode] = countTokens(text);
      frames[mode] = countTokens(events.map((e) => JSON.stringify(e) + "\n").join(""));
      const checks = check(workload, truth, events, text);
      for (const { name, missing } of checks) {
        if (missing.length > 0) {
          failures.push(
            `${workload.name} (${mode}): ${name}: ${missing.length} missing, e.g. ${
              JSON.stringify(missing[0])
            }`,
          );
        }
      }
      verdicts.push(
        `${mode}: ${checks.map((c) => `${c.name} ${c.missing.length === 0 ? "ok" : "FAIL"}`).join(", ")}`,
      );
    }
    for (const key of ["raw", "compact", "parsed"] as const) {
      totals.text[key] += counts[key];
      totals.frames[key] += frames[key];
    }
    for (const [unit, c] of [["frames", frames], ["text", counts]] as const) {
      rows.push([`${workload.name} ${unit}`, String(c.raw), pct(c.compact, c.raw), pct(c.parsed, c.raw)]);
    }
    checkLines.push(`${workload.name}: ${verdicts.join("; ")}`);
    results.push({ workload: workload.name, frames, text: counts, checks: verdicts });
  }
  const reduction = (unit: "frames" | "text", mode: "compact" | "parsed") =>
    1 - totals[unit][mode] / totals[unit].raw;
  for (const unit of ["frames", "text"] as const) {
    const t = totals[unit];
    rows.push([`overall ${unit}`, String(t.raw), pct(t.compact, t.raw), pct(t.parsed, t.raw)]);
  }
  say(table(rows));
  say();
  for (const line of checkLines) say(line);
  if (!(reduction("frames", "parsed") >= ACCEPT_REDUCTION)) {
    failures.push(
      `parsed frames: ${round(100 * reduction("frames", "parsed"), 1)} % fewer tokens < ${
        100 * ACCEPT_REDUCTION
      } %`,
    );
  }
  return finish({
    benchmark: "tokens",
    date: new Date().toISOString(),
    tokenizer: "gpt-tokenizer o200k_base",
    workloads: results,
    totals,
    reduction: {
      frames: {
        compact: round(reduction("frames", "compact"), 3),
        parsed: round(reduction("frames", "parsed"), 3),
      },
      text: {
        compact: round(reduction("text", "compact"), 3),
        parsed: round(reduction("text", "parsed"), 3),
      },
    },
    acceptance: { reduction_min: ACCEPT_REDUCTION },
  }, failures);
}

if (import.meta.main) await runBenchmark("tokens", main);
