/**
 * What ends an agent's wait on a session (`AgentSession.wait`), and the timing of its look at whether the
 * program waits for input (`waitsForInput`).
 *
 * @module
 */

/** Quiet after which a wait looks whether the program waits for input (ms). */
export const INPUT_QUIET_MS = 250;
/** How often it looks again while all stays quiet (ms): a look reads a few /proc files per process. */
export const INPUT_POLL_MS = 250;
/** How long a program seen waiting must go on waiting, with no frame come, to be believed (ms). */
export const INPUT_SETTLE_MS = 200;
/** The same in a shell that marks its commands (OSC 133), whose marks come with the output. */
export const SHELL_SETTLE_MS = 1_000;

/** Why a wait ended. */
export type ReturnedOn = "exit" | "command" | "prompt" | "quiet" | "yield";

/** What ends a wait, besides the program's exit and the yield time. */
export interface WaitRules {
  /** The deadline (ms from now). */
  readonly yieldMs: number;
  /** End at a prompt frame, or a finished command (OSC 133), that came after the wait began. */
  readonly prompt: boolean;
  /** End once new output was followed by this much quiet (ms); none when absent. */
  readonly quietMs?: number;
  /**
   * A program that waits for input without having printed anything since the wait began ends it too (a
   * new program's first wait: `cat`). Otherwise output must come first: after typing, the program may
   * still be in its earlier read when the input reaches it late, and a pure wait must not end at once.
   */
  readonly silentInput?: boolean;
  /** Ends the wait at once when aborted (a cancelled call: nobody waits for its answer). */
  readonly signal?: AbortSignal;
}
