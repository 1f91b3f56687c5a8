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

/**
 * A 0 ms timer runs as the next task, without the 4 ms clamp browsers and Deno put on nested timers:
 * xterm schedules every parse with one, and a fuzz case would otherwise spend most of its time asleep.
 * Only the delay changes; the code under test and its clock (`performance.now`) do not.
 */
const realSetTimeout = globalThis.setTimeout;
const channel = new MessageChannel();
const due: (() => void)[] = [];
channel.port1.onmessage = () => due.shift()?.();
function zeroDelayTimeout(handler: unknown, delay?: number, ...args: unknown[]): unknown {
  if ((delay ?? 0) > 0 || typeof handler !== "function") {
    return Reflect.apply(realSetTimeout, globalThis, [handler, delay, ...args]);
  }
  due.push(() => handler(...args));
  channel.port2.postMessage(null);
  return 0;
}
globalThis.setTimeout = zeroDelayTimeout as unknown as typeof setTimeout;

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
