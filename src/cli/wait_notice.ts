/**
 * `specter test`'s notice for a `wait_for` step that has not matched after a few seconds: one line on
 * stderr, once per step, saying what it waits for. A scenario that hangs on a prompt that never comes
 * otherwise looks like Specter hanging until the step's timeout.
 *
 * @module
 */
import type { Step } from "../scenario/mod.ts";

/** How long a step waits before the notice. */
export const WAIT_NOTICE_MS = 3000;

/** Longest pattern or text the notice quotes. */
const QUOTED = 60;

function quote(text: string): string {
  const clipped = text.length > QUOTED ? `${text.slice(0, QUOTED)}…` : text;
  return JSON.stringify(clipped);
}

/** What a `wait_for` step waits for, in words; undefined for another kind of step. */
export function waitingFor(step: Step): string | undefined {
  if (!("wait_for" in step)) return undefined;
  const condition = step.wait_for;
  if ("text" in condition) return `text ${quote(condition.text)}`;
  if ("regex" in condition) return `regex ${quote(condition.regex)}`;
  if ("prompt" in condition) return `a prompt matching ${quote(condition.prompt)}`;
  if ("screen_stable" in condition) return `the screen to stay still for ${condition.screen_stable} ms`;
  if ("idle" in condition) return `${condition.idle} ms without output`;
  return "the program to exit";
}

/**
 * Watches a scenario's steps as they end: while step N runs (the first when created, then each after a
 * step ended), a timer; when it fires on a `wait_for` step, `warn` gets one line.
 */
export class WaitNotice {
  readonly #steps: readonly Step[];
  readonly #lines: readonly number[];
  readonly #warn: (text: string) => void;
  readonly #delayMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** Starts watching the first step. */
  constructor(
    steps: readonly Step[],
    lines: readonly number[],
    warn: (text: string) => void,
    delayMs = WAIT_NOTICE_MS,
  ) {
    this.#steps = steps;
    this.#lines = lines;
    this.#warn = warn;
    this.#delayMs = delayMs;
    this.#watch(0);
  }

  /** Step `index` ended: the next one is watched. */
  stepEnded(index: number): void {
    this.#watch(index + 1);
  }

  /** The scenario ended. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #watch(index: number): void {
    this.stop();
    const step = this.#steps[index];
    const what = step === undefined ? undefined : waitingFor(step);
    if (what === undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      const line = this.#lines[index];
      const where = line === undefined ? "" : ` (line ${line})`;
      this.#warn(
        `  … step ${index + 1}${where}: still waiting for ${what} after ${Math.round(this.#delayMs / 1000)}s`,
      );
    }, this.#delayMs);
  }
}
