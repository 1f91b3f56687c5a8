/**
 * Shared helpers of the benchmarks in `scripts/bench/`: paths, statistics, child processes, output.
 *
 * Private to the benchmarks (the leading underscore keeps it out of the task list).
 *
 * @module
 */
import { parseArgs } from "node:util";

/** The repository root (benchmarks run their contestants from here). */
export const ROOT: string = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
/** The Deno binary running this benchmark; contestants use the same one. */
export const DENO: string = Deno.execPath();
/** The CLI entry point. */
export const MAIN_TS: string = `${ROOT}/main.ts`;

/** `deno run … main.ts run` without a sandbox or idle frames: the relay as benchmarks measure it. */
export const SPECTER_RUN: readonly string[] = [
  DENO,
  "run",
  "-A",
  MAIN_TS,
  "run",
  "--unsafe-no-sandbox",
  "--ack-no-network-enforcement",
  "--idle",
  "0",
  "--",
];

/** Summary statistics of a sample, in the sample's unit. */
export interface Stats {
  /** Number of values. */
  readonly n: number;
  /** Median (mean of the two middle values for an even count). */
  readonly median: number;
  /** 90th percentile (nearest rank). */
  readonly p90: number;
  /** Smallest value. */
  readonly min: number;
  /** Largest value. */
  readonly max: number;
  /** Arithmetic mean. */
  readonly mean: number;
}

/** Median of `values` (NaN for an empty list). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The `p`-th percentile (0–100) by nearest rank (NaN for an empty list). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

/** Computes {@link Stats} for `values`. */
export function stats(values: readonly number[]): Stats {
  return {
    n: values.length,
    median: median(values),
    p90: percentile(values, 90),
    min: values.length === 0 ? Number.NaN : Math.min(...values),
    max: values.length === 0 ? Number.NaN : Math.max(...values),
    mean: values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length,
  };
}

/** Rounds to `digits` decimals, for JSON output that stays readable. */
export function round(value: number, digits = 2): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** Rounds every field of `s` (see {@link round}). */
export function roundStats(s: Stats, digits = 2): Stats {
  return {
    n: s.n,
    median: round(s.median, digits),
    p90: round(s.p90, digits),
    min: round(s.min, digits),
    max: round(s.max, digits),
    mean: round(s.mean, digits),
  };
}

/**
 * Parses an integer flag such as `--rounds 5` (also `--rounds=5`). Unknown flags are an error, so a
 * typo does not silently run the default.
 */
export function intFlags<K extends string>(
  args: readonly string[],
  defaults: Readonly<Record<K, number>>,
): Record<K, number> {
  const options: Record<string, { type: "string" }> = {};
  for (const name of Object.keys(defaults)) options[name] = { type: "string" };
  const { values } = parseArgs({ args: [...args], options, strict: true, allowPositionals: false });
  const out = { ...defaults } as Record<K, number>;
  for (const name of Object.keys(defaults) as K[]) {
    const raw = (values as Record<string, string | undefined>)[name];
    if (raw === undefined) continue;
    const value = Number(raw);
    if (!Number.isInteger(value) || value <= 0) {
      throw new Error(`--${name} must be a positive integer, got "${raw}"`);
    }
    out[name] = value;
  }
  return out;
}

/** Runs `argv` to completion and returns its stdout (throws on a non-zero exit). */
export async function capture(argv: readonly string[]): Promise<string> {
  const output = await new Deno.Command(argv[0]!, {
    args: argv.slice(1),
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!output.success) {
    const stderr = new TextDecoder().decode(output.stderr).trim();
    throw new Error(`${argv.join(" ")} exited with ${output.code}: ${stderr}`);
  }
  return new TextDecoder().decode(output.stdout);
}

/** True when `program` is found on PATH (via `command -v`). */
export async function hasProgram(program: string): Promise<boolean> {
  const output = await new Deno.Command("sh", {
    args: ["-c", 'command -v "$1" >/dev/null 2>&1', "sh", program],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
  return output.success;
}

/** Prints one human-readable line on stdout. */
export function say(line = ""): void {
  console.log(line);
}

/** Formats rows as an aligned plain-text table (first row is the header). */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => widths[i] = Math.max(widths[i] ?? 0, cell.length));
  return rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n");
}

/**
 * Prints the machine-readable result as the last stdout line and returns the process exit code: 0 when
 * every acceptance check held, 1 otherwise (the reasons go to stderr).
 */
export function finish(result: Record<string, unknown>, failures: readonly string[]): number {
  for (const failure of failures) console.error(`ACCEPTANCE FAILED: ${failure}`);
  console.log(JSON.stringify({ ...result, pass: failures.length === 0, failures }));
  return failures.length === 0 ? 0 : 1;
}

/** Fixed-seed pseudo-random generator (xorshift32): the same input file in every run. */
export function xorshift32(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state;
  };
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Reads a numeric field of `/proc/<pid>/status` (`VmRSS` and `VmHWM` are in KiB); NaN when absent. */
export function procStatus(field: string, pid: number | "self" = "self"): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const match = status.match(new RegExp(`^${field}:\\s+(\\d+)`, "m"));
  return match ? Number(match[1]) : Number.NaN;
}

/**
 * A process's proportional set size in KiB (`Pss` of `/proc/PID/smaps_rollup`): each shared page divided
 * among the processes that map it (two Deno processes share their binary's pages, which RSS counts twice).
 */
export function pssKib(pid: number | "self" = "self"): number {
  const match = Deno.readTextFileSync(`/proc/${pid}/smaps_rollup`).match(/^Pss:\s+(\d+)/m);
  return match ? Number(match[1]) : Number.NaN;
}

/**
 * Runs a benchmark's `main` and exits with its code. A crash still ends with a JSON line (and a
 * non-zero exit), so that whoever parses the last line always finds one.
 */
export async function runBenchmark(name: string, main: () => Promise<number>): Promise<never> {
  let code: number;
  try {
    code = await main();
  } catch (error: unknown) {
    const message = error instanceof Error ? error.message : String(error);
    console.error(error);
    code = finish({ benchmark: name, error: message }, [`crashed: ${message}`]);
  }
  Deno.exit(code);
}

/** The pid of the keeper of `stateDir` (from its command line); throws when none runs. */
export function keeperPid(stateDir: string): number {
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).split("\0");
      if (cmdline.includes("keeper") && cmdline.includes(stateDir)) return Number(entry.name);
    } catch {
      // Gone meanwhile.
    }
  }
  throw new Error("No keeper runs");
}
