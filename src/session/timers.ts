/**
 * `Timers`: the timers of one session, all cleared together when it ends, so that nothing of a finished
 * session fires later or keeps the process alive.
 *
 * @module
 */
import { MAX_DURATION_MS } from "../protocol/mod.ts";

/** A timer handle as `setTimeout` and `setInterval` return it. */
export type Timer = ReturnType<typeof setTimeout>;

/** The set of a session's pending timers. */
export class Timers {
  readonly #pending = new Set<Timer>();

  /**
   * Runs `fn` once after `ms` (unless cleared first). A delay over {@link MAX_DURATION_MS} waits that
   * long: the host timer would fire at once (every input is bounded before it gets here; this is the
   * backstop that keeps a kill or a deadline from ever coming early).
   */
  later(ms: number, fn: () => void): Timer {
    const timer = setTimeout(() => {
      this.#pending.delete(timer);
      fn();
    }, Math.min(ms, MAX_DURATION_MS));
    this.#pending.add(timer);
    return timer;
  }

  /** Runs `fn` every `ms` until cleared (at most every {@link MAX_DURATION_MS}, as {@link later}). */
  every(ms: number, fn: () => void): Timer {
    const timer = setInterval(fn, Math.min(ms, MAX_DURATION_MS));
    this.#pending.add(timer);
    return timer;
  }

  /** Cancels one timer (`undefined`: none). */
  clear(timer: Timer | undefined): void {
    if (timer === undefined) return;
    clearTimeout(timer);
    clearInterval(timer);
    this.#pending.delete(timer);
  }

  /** Cancels every pending timer. */
  clearAll(): void {
    for (const timer of this.#pending) {
      clearTimeout(timer);
      clearInterval(timer);
    }
    this.#pending.clear();
  }

  /** Timers still pending (for tests). */
  get size(): number {
    return this.#pending.size;
  }
}
