/**
 * A fuzz worker: runs a range of cases of one target and reports the case it is on through shared
 * memory, so the main thread can tell a case that never returns (a real hang) and terminate the worker.
 *
 * @module
 */
import { runCases, targetNamed } from "./run.ts";

interface Job {
  readonly target: string;
  readonly seed: number;
  readonly from: number;
  readonly count: number;
  readonly caseMs: number;
  readonly remainingMs: number;
  /** Int32 slot 0: the case being run. */
  readonly progress: SharedArrayBuffer;
}

/** The part of the worker scope used here (the scripts are type-checked with the window lib). */
const scope = self as unknown as {
  onmessage: ((event: MessageEvent<Job>) => void) | null;
  postMessage(message: unknown): void;
};

scope.onmessage = async (event: MessageEvent<Job>) => {
  const job = event.data;
  const progress = new Int32Array(job.progress);
  const report = await runCases(targetNamed(job.target), {
    seed: job.seed,
    from: job.from,
    count: job.count,
    caseMs: job.caseMs,
    deadline: performance.now() + job.remainingMs,
    onCase: (index) => Atomics.store(progress, 0, index),
  });
  scope.postMessage(report);
};
