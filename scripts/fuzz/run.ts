/**
 * Running fuzz cases of one target: each case `i` draws its input from its own generator seeded by
 * (seed, target, i), so `--seed S --target T --case i` replays exactly that case.
 *
 * @module
 */
import { cpuMs } from "./_common.ts";
import { hash32, Prng } from "./_prng.ts";
import { Crash, type FuzzTarget, TARGETS } from "./targets.ts";

/** One failing case. */
export interface Failure {
  readonly target: string;
  readonly index: number;
  readonly kind: "crash" | "hang";
  readonly message: string;
  /** The input (cut to 2000 characters; replay the case to get it whole). */
  readonly input: string;
}

/** What a run of one target did. */
export interface TargetReport {
  readonly target: string;
  cases: number;
  failures: Failure[];
  ms: number;
}

/** Options of {@link runCases}. */
export interface RunOptions {
  readonly seed: number;
  /** First case index. */
  readonly from: number;
  /** Number of cases. */
  readonly count: number;
  /** A case slower than this is a hang (it still finishes: in-process code cannot be interrupted). */
  readonly caseMs: number;
  /** Stop starting cases at this `performance.now()`. */
  readonly deadline: number;
  /** Called before each case (the watchdog of a worker reads it). */
  readonly onCase?: (index: number) => void;
}

/** The target named `name`. */
export function targetNamed(name: string): FuzzTarget {
  const target = TARGETS.find((t) => t.name === name);
  if (target === undefined) {
    throw new Error(`Unknown fuzz target "${name}" (known: ${TARGETS.map((t) => t.name).join(", ")})`);
  }
  return target;
}

/** The input of case `index` of `target` under `seed`. */
export function caseInput(target: FuzzTarget, seed: number, index: number): string {
  return target.generate(new Prng(seed, hash32(target.name), index, index / 0x100000000));
}

/** Runs cases `from` … `from + count - 1` of `target` (or fewer, at the deadline). */
export async function runCases(target: FuzzTarget, options: RunOptions): Promise<TargetReport> {
  const report: TargetReport = { target: target.name, cases: 0, failures: [], ms: 0 };
  const started = performance.now();
  for (let index = options.from; index < options.from + options.count; index++) {
    if (performance.now() >= options.deadline) break;
    options.onCase?.(index);
    const input = caseInput(target, options.seed, index);
    // CPU time, not the wall: a case is not a hang because the process was stopped or another had the core.
    const caseStart = cpuMs();
    try {
      await target.run(input);
    } catch (error: unknown) {
      const message = error instanceof Crash
        ? error.message
        : `${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
      report.failures.push({
        target: target.name,
        index,
        kind: "crash",
        message,
        input: input.slice(0, 2000),
      });
    }
    const took = cpuMs() - caseStart;
    if (took > options.caseMs) {
      report.failures.push({
        target: target.name,
        index,
        kind: "hang",
        message: `The case took ${Math.round(took)} ms of CPU (bound ${options.caseMs} ms)`,
        input: input.slice(0, 2000),
      });
    }
    report.cases++;
  }
  report.ms = performance.now() - started;
  return report;
}
