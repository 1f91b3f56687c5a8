/**
 * What every step of a running scenario works with: the live session, the screen (normalized by the
 * scenario's redactions, on the regex worker), polling waits with their deadlines, and the step failure
 * that carries a diagnostic.
 *
 * @module
 */
import type { ArtifactBundle } from "../artifacts/mod.ts";
import type { SpecterError } from "../errors.ts";
import type { ExitFrame, ScreenSnapshot } from "../protocol/mod.ts";
import type { Session } from "../session/mod.ts";
import { snapshotText } from "../terminal/mod.ts";
import { TIMED_OUT, within } from "../clock.ts";
import type { LoadedScenario } from "./load.ts";
import type { Step } from "./schema.ts";
import type { RegexClock, RegexRule } from "./regex_clock.ts";
import type { RunScenarioOptions } from "./run_options.ts";

/** How often waits look at the screen again. */
export const POLL_MS = 50;
/** Default step timeout. */
export const DEFAULT_STEP_TIMEOUT_MS = 10_000;

/**
 * Longest a scenario regex (`screen_matches`, a `run.normalize` redaction outside a wait) may run over
 * one text before the step fails; inside a wait, the wait's remaining time is the budget.
 */
export const REGEX_BUDGET_MS = 2_000;

/** A step failed: carries the diagnostic. */
export class StepFailure extends Error {
  constructor(message: string, readonly expected: string) {
    super(message);
  }
}

/** A step as its result's `action` names it (`wait_for {"text":"x"}`). */
export function describe(step: Step): string {
  const [key, value] = Object.entries(step)[0]!;
  return `${key} ${typeof value === "string" ? value : JSON.stringify(value)}`;
}

/** Applies the scenario's redactions on the regex worker (see regex_clock.ts): the clock always wins. */
export function normalizer(
  clock: RegexClock,
  rules: readonly RegexRule[],
): (text: string, budgetMs?: number) => Promise<string> {
  return async (text, budgetMs = REGEX_BUDGET_MS) => {
    const out = await clock.replace(rules, text, budgetMs);
    if (out === TIMED_OUT) {
      throw new StepFailure(
        `The run.normalize redactions did not finish within ${Math.round(budgetMs)} ms`,
        "redactions that finish",
      );
    }
    return out;
  };
}

/** Whether `source` matches `text` within `budgetMs` (over budget: `null`, so a wait polls on). */
export async function matches(
  clock: RegexClock,
  source: string,
  flags: string,
  text: string,
  budgetMs: number,
): Promise<boolean | null> {
  const verdict = await clock.test(source, flags, text, budgetMs);
  return verdict === TIMED_OUT ? null : verdict;
}

/** What is left of `budgetMs` that began at `started` (at least 1 ms: a regex gets one try). */
export function left(budgetMs: number, started: number): number {
  return Math.max(1, budgetMs - (performance.now() - started));
}

/** What the frame pump of a run tells the steps: when output last came, and output that failed the run. */
export interface RunWatch {
  /** When the last `stdout` frame came (`performance.now()`). */
  lastOutput: number;
  /** Output that fails the run (`E_TERMINAL_PARSE`), or null. */
  terminalError: SpecterError | null;
}

/** What the steps of one run share. */
export interface StepRun {
  readonly live: Session;
  readonly clock: RegexClock;
  readonly bundle: ArtifactBundle;
  readonly loaded: LoadedScenario;
  readonly options: RunScenarioOptions;
  /** The run's working directory. */
  readonly cwd: string;
  /** The run's fresh workspace, or null. */
  readonly workspace: string | null;
  /** The policy as enforced. */
  readonly enforced: Session["launch"]["policy"];
  readonly watch: RunWatch;
  /** Applies the redactions (see {@link normalizer}). */
  readonly normalize: (text: string, budgetMs?: number) => Promise<string>;
  /** The screen; with a budget, as far as the terminal model got within it (then `partial`). */
  screen(budgetMs?: number): Promise<ScreenSnapshot>;
  /** The screen's normalized text; the budget covers the wait for the model and the redactions. */
  screenText(budgetMs?: number): Promise<string>;
  /** Polls `test` (given the time left, its regex budget) until it holds or the deadline passes. */
  waitUntil(test: (budgetMs: number) => Promise<boolean>, timeoutMs: number, what: string): Promise<void>;
  /** The `exit` frame, waited for at most `timeoutMs`. */
  exited(timeoutMs: number): Promise<ExitFrame>;
  /** The index of the next snapshot step's files (1, 2, …). */
  nextSnapshot(): number;
}

/** The context of a run's steps. */
export function stepRun(
  parts: Omit<StepRun, "screen" | "screenText" | "waitUntil" | "exited" | "nextSnapshot">,
): StepRun {
  const { live, normalize, watch } = parts;
  let snapshotIndex = 0;
  const screen = (budgetMs?: number) => live.screen(budgetMs === undefined ? {} : { waitMs: budgetMs });
  return {
    ...parts,
    screen,
    screenText: async (budgetMs?: number) => {
      const started = performance.now();
      const text = snapshotText(await screen(budgetMs));
      return await normalize(text, budgetMs === undefined ? undefined : left(budgetMs, started));
    },
    waitUntil: async (test, timeoutMs, what) => {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        if (watch.terminalError) throw watch.terminalError;
        let held = false;
        try {
          held = await test(Math.max(1, deadline - performance.now()));
        } catch (failure: unknown) {
          // A redaction that ran out of the wait's time: the wait times out, on time.
          if (!(failure instanceof StepFailure)) throw failure;
        }
        if (held) return;
        if (performance.now() >= deadline) {
          throw new StepFailure(`Timed out after ${timeoutMs} ms waiting for ${what}`, what);
        }
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    },
    exited: async (timeoutMs) => {
      const result = await within(live.exited, timeoutMs);
      if (result === TIMED_OUT) {
        throw new StepFailure(`The program did not exit within ${timeoutMs} ms`, "exit");
      }
      return result;
    },
    nextSnapshot: () => ++snapshotIndex,
  };
}
