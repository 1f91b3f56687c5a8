/**
 * Running a scenario's own regular expressions (waits, `screen_matches`, `run.normalize` redactions)
 * over program output without letting them stop the clock.
 *
 * JavaScript regexes backtrack: a pattern such as `^(a+)+$` takes exponential time on a line of `a`s
 * that a hostile program can print, and a match running on the main thread would block every timer, so
 * a step's timeout (and the run's) would never fire. Here each match runs on a worker thread and the
 * main thread waits for the answer only until a deadline: past it the step fails on time, the worker
 * is terminated and a fresh one serves later matches.
 *
 * Limits, documented: V8 does not interrupt a running backtracking match, so a terminated worker may
 * keep one CPU busy until its match ends or Specter exits (the CLI exits when the scenarios are done),
 * so after {@link MAX_ABANDONED} abandoned workers a run's later matches time out at once instead of
 * starting more; and the text a regex runs over is capped at {@link MAX_REGEX_INPUT} characters (its last ones; a
 * screen of the largest allowed size fits).
 *
 * @module
 */
import { TIMED_OUT } from "../clock.ts";

/** Most characters of program output one regex runs over (the tail is kept): above a 1000x1000 screen. */
export const MAX_REGEX_INPUT = 2 * 1024 * 1024;

/** Most workers one clock abandons to runaway matches; past it every match times out at once. */
export const MAX_ABANDONED = 3;

/** One redaction rule. */
export interface RegexRule {
  /** The pattern (applied with the `g` flag). */
  readonly pattern: string;
  /** Its replacement (`$1` etc. as in `String.prototype.replace`). */
  readonly replacement: string;
}

// Plain JavaScript, started from a Blob: no module file to ship with a compiled binary.
const WORKER_SOURCE = `
self.onmessage = (event) => {
  const { id, kind, source, flags, rules, text } = event.data;
  try {
    if (kind === "test") {
      self.postMessage({ id, value: new RegExp(source, flags).test(text) });
    } else {
      let out = text;
      for (const rule of rules) out = out.replace(new RegExp(rule.pattern, "g"), rule.replacement);
      self.postMessage({ id, value: out });
    }
  } catch (error) {
    self.postMessage({ id, error: String(error && error.message || error) });
  }
};
`;

/** The outcome of a match that ran out of time (the one symbol of every wait that ran out of time). */
export { TIMED_OUT };

type Pending = { resolve(value: unknown): void; reject(error: Error): void };

/** A worker that runs regexes with a deadline; one per scenario run. {@link close} it when done. */
export class RegexClock {
  #worker: Worker | null = null;
  #url: string | null = null;
  #next = 0;
  #pending = new Map<number, Pending>();
  #abandoned = 0;

  /** True when `source` (with `flags`) matches `text`; {@link TIMED_OUT} when it took over `budgetMs`. */
  test(source: string, flags: string, text: string, budgetMs: number): Promise<boolean | typeof TIMED_OUT> {
    return this.#ask({ kind: "test", source, flags, text: clip(text) }, budgetMs) as Promise<
      boolean | typeof TIMED_OUT
    >;
  }

  /** `text` with every rule applied in order; {@link TIMED_OUT} when that took over `budgetMs`. */
  replace(rules: readonly RegexRule[], text: string, budgetMs: number): Promise<string | typeof TIMED_OUT> {
    if (rules.length === 0) return Promise.resolve(text);
    return this.#ask({ kind: "replace", rules, text: clip(text) }, budgetMs) as Promise<
      string | typeof TIMED_OUT
    >;
  }

  /** Terminates the worker (a later call starts a new one). */
  close(): void {
    this.#worker?.terminate();
    this.#worker = null;
    if (this.#url !== null) URL.revokeObjectURL(this.#url);
    this.#url = null;
    for (const pending of this.#pending.values()) pending.reject(new Error("The regex worker was closed"));
    this.#pending.clear();
  }

  #start(): Worker {
    if (this.#worker !== null) return this.#worker;
    this.#url ??= URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "application/javascript" }));
    const worker = new Worker(this.#url, { type: "module" });
    worker.onmessage = (event: MessageEvent<{ id: number; value?: unknown; error?: string }>) => {
      const pending = this.#pending.get(event.data.id);
      if (pending === undefined) return; // Answered after its deadline: nobody waits any more.
      this.#pending.delete(event.data.id);
      if (event.data.error !== undefined) pending.reject(new Error(event.data.error));
      else pending.resolve(event.data.value);
    };
    this.#worker = worker;
    return worker;
  }

  #ask(message: Record<string, unknown>, budgetMs: number): Promise<unknown> {
    // Each abandoned worker may still burn a CPU: never more than a few per run.
    if (this.#abandoned >= MAX_ABANDONED) return Promise.resolve(TIMED_OUT);
    const worker = this.#start();
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.#pending.delete(id)) return;
        // The worker is stuck in a backtracking match: abandon it; the next ask starts a fresh one.
        if (this.#worker === worker) {
          worker.terminate();
          this.#worker = null;
          this.#abandoned++;
        }
        resolve(TIMED_OUT);
      }, Math.max(1, budgetMs));
      this.#pending.set(id, {
        resolve(value) {
          clearTimeout(timer);
          resolve(value);
        },
        reject(error) {
          clearTimeout(timer);
          reject(error);
        },
      });
      worker.postMessage({ id, ...message });
    });
  }
}

function clip(text: string): string {
  return text.length > MAX_REGEX_INPUT ? text.slice(text.length - MAX_REGEX_INPUT) : text;
}
