/**
 * Flood benchmark: `specter exec` of a program that prints without end must stay in proportion to the
 * result it returns, in memory and in time. Each case runs the CLI as a user does (sandboxed, the default
 * policy; `basic` where a shell runs the flood) under `/usr/bin/time`, its JSON result written to a file,
 * and is compared with its silent twin in the same round: the same `exec` of `sleep 5`, which runs into the
 * same one-second timeout and prints nothing (Deno, the sandbox, the reader thread, the timeout's kill).
 * `exec -- true` (ending at once) is measured too, for reference.
 *
 *   deno run -A scripts/bench/flood.ts [--rounds 3]
 *
 * Figures per case (medians over the rounds): peak RSS, extra = peak RSS − the silent twin's, the result's
 * size (bytes of JSON printed), extra ÷ result, the wall time, and late = how much later than the silent
 * twin the result came, beyond the case's own limit: `--timeout` (plus `--grace` for a program that
 * ignores the polite signals), or for an output budget the `duration_ms` the result reports.
 *
 * Acceptance (issue 23, item 7): `exec --timeout 1s -- yes` within extra ≤ 4 × result and late ≤ 0.5 s.
 * The other cases get the same marks, reported: `--raw`, a flood of colour sequences (a small result for
 * much output read), a program that ignores SIGHUP and SIGTERM (its grace counts into its limit), and
 * output budgets of 1, 8 and 16 MiB. Every case's result must be true: `timed_out`, `truncated` and
 * `signal` as the case expects, output present, never more than `--max-output`. Run it on a quiet machine.
 *
 * @module
 */
import { DENO, finish, intFlags, MAIN_TS, median, ROOT, round, runBenchmark, say, table } from "./_common.ts";

const MIB = 1024 * 1024;
/** Extra memory may be at most this multiple of the result. */
const MEMORY_FACTOR = 4;
/** The result may come this much after the program's limit (beyond when its silent twin's came). */
const LATE_MS = 500;
const ESCAPES = `yes "$(printf '\\033[1;31mx\\033[0m')"`;
/** Every case's silent twin runs into this limit too. */
const SILENT_LIMIT_MS = 1000;

/** How a run may end, as its result says. */
interface Outcome {
  readonly timed_out: boolean;
  readonly truncated: boolean;
  readonly signal: string;
}

interface Case {
  readonly name: string;
  /** `exec` flags and command. */
  readonly args: readonly string[];
  /** The time limit it runs into, ms (a run its output budget ended counts from its `duration_ms`). */
  readonly limitMs: number;
  /** What its result may say (any of these). */
  readonly expect: readonly Outcome[];
  readonly maxOutput?: number;
  /** The issue's goal: its figures decide the benchmark (the others' are reported). */
  readonly goal?: true;
}

const TIMED = { timed_out: true, truncated: false, signal: "HUP" } as const;
const CUT = { timed_out: false, truncated: true, signal: "KILL" } as const;

const CASES: readonly Case[] = [
  {
    name: "--timeout 1s -- yes",
    args: ["--timeout", "1s", "--", "yes"],
    limitMs: 1000,
    expect: [TIMED],
    goal: true,
  },
  {
    name: "--raw --timeout 1s -- yes",
    args: ["--raw", "--timeout", "1s", "--", "yes"],
    limitMs: 1000,
    expect: [TIMED],
  },
  {
    name: "--timeout 1s -- yes ESC[1;31mxESC[0m",
    args: ["--policy", "basic", "--timeout", "1s", "--", "sh", "-c", `exec ${ESCAPES}`],
    limitMs: 1000,
    // 16 bytes a line: the default budget of 16 MiB may end it before the second is over.
    expect: [TIMED, CUT],
  },
  {
    name: "--timeout 1s --grace 1s, HUP/TERM ignored",
    args: [
      "--policy",
      "basic",
      "--timeout",
      "1s",
      "--grace",
      "1s",
      "--",
      "sh",
      "-c",
      "trap '' HUP TERM; exec yes",
    ],
    limitMs: 2000,
    expect: [{ timed_out: true, truncated: false, signal: "KILL" }],
  },
  ...[1, 8, 16].map((mib): Case => ({
    name: `--max-output ${mib}M -- yes`,
    args: ["--max-output", `${mib}M`, "--timeout", "60s", "--", "yes"],
    limitMs: 60_000,
    expect: [CUT],
    maxOutput: mib * MIB,
  })),
];

/** One run: peak RSS (KiB), wall ms, and the result. */
interface Run {
  readonly rssKiB: number;
  readonly wallMs: number;
  readonly bytes: number;
  readonly result: Record<string, unknown>;
}

async function execOnce(args: readonly string[], dir: string): Promise<Run> {
  const out = `${dir}/result.json`;
  const timeFile = `${dir}/time.txt`;
  const started = performance.now();
  const { stderr } = await new Deno.Command("/usr/bin/time", {
    args: [
      "-f",
      "%M",
      "-o",
      timeFile,
      "sh",
      "-c",
      'exec "$0" "$@" > "$OUT"',
      DENO,
      "run",
      "-A",
      MAIN_TS,
      "exec",
      ...args,
    ],
    cwd: ROOT,
    env: { OUT: out },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  const wallMs = performance.now() - started;
  const text = await Deno.readTextFile(out);
  let result: Record<string, unknown>;
  try {
    result = JSON.parse(text);
  } catch {
    throw new Error(`exec ${args.join(" ")} printed no JSON result: ${new TextDecoder().decode(stderr)}`);
  }
  const rssKiB = Number((await Deno.readTextFile(timeFile)).trim().split(/\s+/).at(-1));
  return { rssKiB, wallMs, bytes: (await Deno.stat(out)).size, result };
}

/** What is wrong with a case's result (empty when it is what the case expects). */
function problems(c: Case, run: Run): string[] {
  const found: string[] = [];
  const { timed_out, truncated, signal } = run.result;
  if (!c.expect.some((o) => o.timed_out === timed_out && o.truncated === truncated && o.signal === signal)) {
    found.push(
      `ended with ${JSON.stringify({ timed_out, truncated, signal })}, not ${JSON.stringify(c.expect)}`,
    );
  }
  const output = String(run.result.output ?? "");
  if (output.length === 0) found.push("no output");
  const bytes = new TextEncoder().encode(output).length;
  if (c.maxOutput !== undefined && bytes > c.maxOutput) found.push(`${bytes} bytes of output > --max-output`);
  return found;
}

/** The policy flags a case runs with (its silent twin runs with the same). */
function policyOf(c: Case): string[] {
  return c.args[0] === "--policy" ? c.args.slice(0, 2) : [];
}

async function main(): Promise<number> {
  const flags = intFlags(Deno.args, { rounds: 3 });
  const dir = await Deno.makeTempDir({ prefix: "specter-bench-flood-" });
  try {
    await execOnce(["--", "true"], dir); // Warms Deno's caches outside the measurement.
    const policies = [...new Set(CASES.map((c) => policyOf(c).join(" ")))];
    const silent = new Map<string, Run[]>(policies.map((p) => [p, []]));
    const bare: Run[] = [];
    const runs = new Map<string, Run[]>(CASES.map((c) => [c.name, []]));
    const failures: string[] = [];
    for (let round = 0; round < flags.rounds; round++) {
      bare.push(await execOnce(["--", "true"], dir));
      for (const policy of policies) {
        const args = [...(policy === "" ? [] : policy.split(" ")), "--timeout", "1s", "--", "sleep", "5"];
        silent.get(policy)!.push(await execOnce(args, dir));
      }
      for (const c of CASES) {
        const run = await execOnce(c.args, dir);
        runs.get(c.name)!.push(run);
        for (const problem of problems(c, run)) failures.push(`${c.name}, round ${round + 1}: ${problem}`);
      }
    }
    const peakOf = (list: readonly Run[]) => median(list.map((r) => r.rssKiB)) / 1024;
    const wallOf = (list: readonly Run[]) => median(list.map((r) => r.wallMs));
    const rows = [["case", "peak MiB", "extra MiB", "result MB", "extra ÷ result", "wall ms", "late ms", ""]];
    for (const [policy, list] of silent) {
      rows.push([
        `silent twin: ${policy} --timeout 1s -- sleep 5`.replace(":  ", ": "),
        round(peakOf(list), 1).toString(),
        "",
        "",
        "",
        round(wallOf(list)).toString(),
        "",
        "",
      ]);
    }
    rows.push([
      "for reference: -- true",
      round(peakOf(bare), 1).toString(),
      "",
      "",
      "",
      round(wallOf(bare)).toString(),
      "",
      "",
    ]);
    const figures: Record<string, unknown> = {};
    for (const c of CASES) {
      const list = runs.get(c.name)!;
      const twin = silent.get(policyOf(c).join(" "))!;
      const peak = peakOf(list);
      const extra = peak - peakOf(twin);
      const resultMB = median(list.map((r) => r.bytes)) / 1e6;
      const ratio = (extra * MIB) / (resultMB * 1e6);
      const wall = wallOf(list);
      const limit = median(
        list.map((r) => r.result.truncated === true ? Number(r.result.duration_ms) : c.limitMs),
      );
      const late = (wall - limit) - (wallOf(twin) - SILENT_LIMIT_MS);
      const pass = ratio <= MEMORY_FACTOR && late <= LATE_MS;
      if (c.goal && ratio > MEMORY_FACTOR) {
        failures.push(`${c.name}: extra ${round(ratio)} × the result > ${MEMORY_FACTOR}`);
      }
      if (c.goal && late > LATE_MS) {
        failures.push(`${c.name}: the result came ${round(late)} ms late > ${LATE_MS} ms`);
      }
      const extraOverBare = (peak - peakOf(bare)) * MIB / (resultMB * 1e6);
      rows.push([
        c.name,
        round(peak, 1).toString(),
        round(extra, 1).toString(),
        round(resultMB, 2).toString(),
        `${round(ratio, 2)} (${round(extraOverBare, 2)} over true)`,
        round(wall).toString(),
        round(late).toString(),
        `${pass ? "PASS" : "FAIL"}${c.goal ? " (goal)" : ""}`,
      ]);
      figures[c.name] = {
        peak_mib: round(peak, 1),
        extra_mib: round(extra, 1),
        result_mb: round(resultMB, 2),
        ratio: round(ratio, 2),
        ratio_over_true: round(extraOverBare, 2),
        wall_ms: round(wall),
        late_ms: round(late),
        pass,
      };
    }
    say(`flood: ${flags.rounds} rounds, medians`);
    say(table(rows));
    say(`goal: extra ≤ ${MEMORY_FACTOR} × result, late ≤ ${LATE_MS} ms`);
    return finish({
      benchmark: "flood",
      rounds: flags.rounds,
      silent: Object.fromEntries(
        [...silent].map((
          [p, l],
        ) => [p || "default", { peak_mib: round(peakOf(l), 1), wall_ms: round(wallOf(l)) }]),
      ),
      true: { peak_mib: round(peakOf(bare), 1), wall_ms: round(wallOf(bare)) },
      cases: figures,
    }, failures);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await runBenchmark("flood", main);
