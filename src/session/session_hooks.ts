/**
 * `SessionHooks`: what a host (the daemon) adds to a session: a durable log, the end of input where it
 * holds the program's socket, and taking over a session a previous host ran.
 *
 * @module
 */
import type { Frame } from "../protocol/mod.ts";

/** What a host (the daemon) adds to a session: a durable log, and taking over one a previous host ran. */
export interface SessionHooks {
  /**
   * Called with every frame before any reader can take it (the daemon's frame log writes it to disk
   * there). It must not throw: a host reports its own failures.
   */
  readonly sink?: (frame: Frame) => void;
  /**
   * Ends the input of a `tty: false` session whose socket another process holds (the daemon's keeper,
   * which relays input): called once, when every byte typed was written, with how many bytes were
   * written on the session's terminal descriptor (the relay) in all. It must not throw.
   */
  readonly endInput?: (written: number) => void;
  /**
   * The session continues one a previous host ran: no `start` frame, seqs go on from `nextSeq`, and the
   * frames of `history` (its log) rebuild the output tail and the screen.
   */
  readonly resume?: {
    readonly nextSeq: number;
    readonly history: readonly Frame[];
    /** The output offset the terminal's output resumes at ({@link Session.outputConsumed} counts on). */
    readonly outputOffset: number;
    /** True when its input was closed already: typing is then `E_SESSION_CLOSED`. */
    readonly inputClosed?: boolean;
    /**
     * When the program started (Unix time, seconds): the wall clock and `duration_ms` count from there, so a
     * timeout keeps its deadline across the change of host. The output budget counts on from `outputOffset`.
     */
    readonly started?: number;
  };
}
