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
 * Two sets (see `scripts/record_workloads.ts`): **tuned**, the recordings the views were developed on, and
 * **held-out**, recorded for issue 24 before the views changed. Each is printed with its overall ratios; the
 * held-out set also for the five kinds issue 24 names (apt, a router's pager, top, pytest, npm). **floor**
 * is what no view can go below without losing content: the tokens of what a terminal leaves (the final
 * buffer, a pager's rows, a full-screen program's last screen), as text.
 *
 * Acceptance: every check passing; issue 13's goal on the tuned set (parsed frames ≥ 70 % fewer tokens than
 * raw); issue 24's on the held-out recordings of the five kinds it names (parsed frames ≥ 70 %, compact
 * frames ≥ 50 %), and compact ≥ 50 % on the whole held-out set. Parsed is not held to 70 % on the whole
 * held-out set: its floor alone (the text a terminal leaves, without any framing) is printed beside it, and
 * when the floor is under 70 % fewer tokens than raw frames no view can reach 70 % without dropping
 * content. Both counts and both views are printed; the goals are checked on frames (issue 13 defines raw
 * as today's frames).
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

/** Issue 13's goal on the tuned set, and issue 24's for the parsed view on the held-out set. */
const ACCEPT_REDUCTION = 0.7;
/** Issue 24's goal for the compact view on the held-out set. */
const ACCEPT_COMPACT_HELD_OUT = 0.5;

/** The two sets (see `scripts/record_workloads.ts`): tuned on, and held out (recorded before the views changed). */
export type WorkloadSet = "tuned" | "held-out";

/** What each workload must keep. */
interface Workload {
  readonly name: string;
  /** Tuned (`fixtures/workloads/`) or held out (`fixtures/workloads/held-out/`). */
  readonly set: WorkloadSet;
  /** Lines of the terminal's final buffer that every view must keep. */
  readonly keep?: RegExp;
  /** A pager: every row shown at each pause is content (prompts aside), and a prompt must be reported. */
  readonly pages?: boolean;
  /** A full-screen program: the rows of its last screen (as left on the terminal at the end). */
  readonly finalScreen?: boolean;
  /** One of the five kinds issue 24 names (an apt run, a router's paged config, top, pytest, npm). */
  readonly issueKind?: boolean;
  /**
   * A full-screen program's first screen: the first screen the parsed view reports has a row matching each
   * of these (top's header: the load average and the task counts), and the compact view's text has them.
   */
  readonly firstScreen?: readonly RegExp[];
}

const NPM_KEEP = /added \d+ packages?|npm (?:warn|err)|deprecated/i;
const APT_KEEP = /^(?:Get:|Fetched|Setting up|Unpacking|Selecting|\d+ upgraded|E:|W:|Processing triggers)/;
const TOP_FIRST = [/load average/, /^Tasks:/];

export const WORKLOADS: readonly Workload[] = [
  { name: "npm-install", set: "tuned", keep: NPM_KEEP },
  { name: "apt-install", set: "tuned", keep: APT_KEEP },
  { name: "pytest", set: "tuned", keep: /FAILED|PASSED|ERROR|Error|^E |^>|=====|collected/ },
  { name: "netcli-more", set: "tuned", pages: true },
  { name: "top", set: "tuned", finalScreen: true, firstScreen: TOP_FIRST },
  { name: "git-log", set: "tuned", pages: true },
  { name: "make-gcc", set: "tuned", keep: /error|warning|^make|^gcc|\^/ },
  { name: "npm-view", set: "tuned", keep: /express@|dependencies|latest|published|tarball/ },
  // Held out: recorded for issue 24 before the views changed; their checks were written before their views were read.
  { name: "apt-figlet", set: "held-out", issueKind: true, keep: APT_KEEP },
  { name: "netcli-interfaces", set: "held-out", issueKind: true, pages: true },
  { name: "top-sorted", set: "held-out", issueKind: true, finalScreen: true, firstScreen: TOP_FIRST },
  {
    name: "pytest-cart",
    set: "held-out",
    issueKind: true,
    keep: /FAILED|PASSED|ERROR|Error|^E |^>|=====|collected|passed|failed/,
  },
  { name: "npm-install-express", set: "held-out", issueKind: true, keep: NPM_KEEP },
  { name: "git-log-patch", set: "held-out", pages: true },
  { name: "cargo-build", set: "held-out", keep: /error|warning|-->|^\s*\d+ \|/ },
  { name: "python-traceback", set: "held-out", keep: /Traceback|File "|Error|starting|exception/ },
  { name: "ls-etc", set: "held-out", keep: /\S/ },
  { name: "python-repl", set: "held-out", keep: /\S/ },
  { name: "vim-edit", set: "held-out", firstScreen: [/notes\.txt/, /build the release image/] },
  { name: "less-services", set: "held-out", pages: true },
  { name: "curl-progress", set: "held-out", keep: /100\.0%/ },
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
  if (workload.firstScreen) {
    const first = events.find((e) => e.type === "screen");
    const rows = first?.type === "screen" ? first.rows : null;
    // A screen view: its first screen must have drawn them; a line view: its text must have them.
    const missing = workload.firstScreen.filter((re) =>
      rows === null ? !text.split("\n").some((line) => re.test(line)) : !rows.some((row) => re.test(row))
    );
    checks.push({
      name: `first screen${rows === null ? " in the text" : ""}`,
      missing: missing.map((re) => `no row matching ${re}`),
    });
  }
  return checks;
}

type Counts = { raw: number; compact: number; parsed: number };

/** Tokens of one workload: frames and text in each view, and the verdicts of its checks. */
async function measure(workload: Workload, failures: string[]) {
  const dir = workload.set === "held-out" ? "fixtures/workloads/held-out" : "fixtures/workloads";
  const file = `${ROOT}/${dir}/${workload.name}.cast`;
  const recording = parseRecording(await Deno.readTextFile(file));
  if ("problem" in recording) throw new Error(`${file} ${recording.problem}`);
  const output = recording.events.filter((e) => e[1] === "o");
  const raw = output.map((e) => e[2]).join("");
  const start = recording.header.timestamp ?? 0;
  const rawFrames = output.map(([time, , data], i) =>
    JSON.stringify({ seq: i + 1, ts: Math.round((start + time) * 1e6) / 1e6, type: "stdout", data }) + "\n"
  ).join("");
  const truth = await truthOf(recording);
  const floor = countTokens(floorOf(workload, truth));
  const text: Counts = { raw: countTokens(raw), compact: 0, parsed: 0 };
  const frames: Counts = { raw: countTokens(rawFrames), compact: 0, parsed: 0 };
  const verdicts: string[] = [];
  for (const mode of ["compact", "parsed"] as const) {
    const events = await viewRecording(recording, mode);
    const rendered = renderText(events);
    text[mode] = countTokens(rendered);
    frames[mode] = countTokens(events.map((e) => JSON.stringify(e) + "\n").join(""));
    const checks = check(workload, truth, events, rendered);
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
  return { frames, text, verdicts, floor };
}

/**
 * What a reader must get at least, as text: the terminal's final buffer (what a line program leaves), a
 * pager's distinct rows, a full-screen program's last screen. No view can go below it without losing
 * content; content-only output (a listing, a paged configuration) has little else.
 */
function floorOf(workload: Workload, truth: Truth): string {
  const lines = [...truth.lines];
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const parts = [lines.join("\n")];
  if (workload.pages) {
    const rows = new Set(truth.pauses.flatMap((p) => p.rows).filter((r) => r.trim() !== ""));
    parts.push([...rows].filter((r) => !lines.includes(r)).join("\n"));
  }
  if (workload.finalScreen) parts.push((truth.pauses.at(-1)?.rows ?? []).join("\n"));
  return parts.join("\n");
}

async function main(): Promise<number> {
  const pct = (n: number, of: number) => {
    const saved = round(100 * (1 - n / of), 1);
    return `${n} (${saved < 0 ? "+" : "−"}${Math.abs(saved)} %)`; // More tokens than raw: a plus.
  };
  const failures: string[] = [];
  const results: Record<string, unknown>[] = [];
  const sets: Record<string, unknown> = {};
  for (const set of ["tuned", "held-out"] as const) {
    const rows: string[][] = [[`${set} set`, "raw", "compact", "parsed", "floor"]];
    const totals = { frames: { raw: 0, compact: 0, parsed: 0 }, text: { raw: 0, compact: 0, parsed: 0 } };
    const kinds = { frames: { raw: 0, compact: 0, parsed: 0 }, text: { raw: 0, compact: 0, parsed: 0 } };
    let floors = 0;
    const checkLines: string[] = [];
    for (const workload of WORKLOADS.filter((w) => w.set === set)) {
      const { frames, text, verdicts, floor } = await measure(workload, failures);
      floors += floor;
      for (const key of ["raw", "compact", "parsed"] as const) {
        totals.text[key] += text[key];
        totals.frames[key] += frames[key];
        if (workload.issueKind) {
          kinds.text[key] += text[key];
          kinds.frames[key] += frames[key];
        }
      }
      for (const [unit, c] of [["frames", frames], ["text", text]] as const) {
        rows.push([
          `${workload.name} ${unit}`,
          String(c.raw),
          pct(c.compact, c.raw),
          pct(c.parsed, c.raw),
          unit === "text" ? pct(floor, c.raw) : "",
        ]);
      }
      checkLines.push(`${workload.name}: ${verdicts.join("; ")}`);
      results.push({ workload: workload.name, set, frames, text, floor, checks: verdicts });
    }
    const reduction = (unit: "frames" | "text", mode: "compact" | "parsed") =>
      1 - totals[unit][mode] / totals[unit].raw;
    for (const unit of ["frames", "text"] as const) {
      const t = totals[unit];
      rows.push([
        `${set} overall ${unit}`,
        String(t.raw),
        pct(t.compact, t.raw),
        pct(t.parsed, t.raw),
        unit === "text" ? pct(floors, t.raw) : "",
      ]);
    }
    if (set === "held-out") {
      for (const unit of ["frames", "text"] as const) {
        const t = kinds[unit];
        rows.push([
          `issue's 5 kinds ${unit}`,
          String(t.raw),
          pct(t.compact, t.raw),
          pct(t.parsed, t.raw),
          "",
        ]);
      }
    }
    say(table(rows));
    say();
    for (const line of checkLines) say(line);
    say();
    // The goals, on frames as since issue 13 (raw is today's frames; text is printed beside them): issue
    // 13's on the tuned set (parsed), issue 24's on the held-out set (parsed and compact).
    // issue 13's on the tuned set (parsed); issue 24's on the held-out recordings of the five kinds it
    // names (parsed, compact) and compact on the whole held-out set. The whole set's parsed figure is
    // printed with the bound its floor puts on any view.
    type Goal = [scope: string, counts: typeof totals, mode: "compact" | "parsed", min: number];
    const goals: Goal[] = set === "tuned" ? [["tuned", totals, "parsed", ACCEPT_REDUCTION]] : [
      ["held-out, issue's 5 kinds", kinds, "parsed", ACCEPT_REDUCTION],
      ["held-out, issue's 5 kinds", kinds, "compact", ACCEPT_COMPACT_HELD_OUT],
      ["held-out", totals, "compact", ACCEPT_COMPACT_HELD_OUT],
    ];
    for (const [scope, counts, mode, min] of goals) {
      const saved = 1 - counts.frames[mode] / counts.frames.raw;
      const line = `${scope} ${mode} frames: ${round(100 * saved, 1)} % fewer tokens (goal ≥ ${100 * min} %)`;
      say(line);
      if (!(saved >= min)) failures.push(line);
    }
    if (set === "held-out") {
      const bound = 1 - floors / totals.frames.raw;
      say(
        `held-out parsed frames: ${
          round(100 * reduction("frames", "parsed"), 1)
        } % fewer tokens; its floor ` +
          `(text, no framing) is ${
            round(100 * bound, 1)
          } % fewer than raw frames, the most any view can save ` +
          `here without dropping content`,
      );
    }
    say();
    sets[set] = {
      totals,
      floor: floors,
      ...(set === "held-out" ? { issue_kinds: kinds } : {}),
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
    };
  }
  return finish({
    benchmark: "tokens",
    date: new Date().toISOString(),
    tokenizer: "gpt-tokenizer o200k_base",
    workloads: results,
    sets,
    acceptance: {
      tuned: { parsed_frames_min: ACCEPT_REDUCTION },
      held_out_issue_kinds: { parsed_min: ACCEPT_REDUCTION, compact_min: ACCEPT_COMPACT_HELD_OUT },
      held_out: { compact_min: ACCEPT_COMPACT_HELD_OUT },
    },
  }, failures);
}

if (import.meta.main) await runBenchmark("tokens", main);
