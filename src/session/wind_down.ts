/**
 * `WindDown`: when a session may end. `exit` promises that nothing of the program is left and that all
 * its output was read, so it waits for all of: the leader reaped, the terminal drained to EOF (or given
 * up on after {@link DRAIN_DEADLINE_MS} when someone outside the session holds it open), a sandbox's
 * init reaped, the reader thread done with the terminal, no snapshot still owed, and no process of the
 * session alive (killed again and looked for again, {@link SWEEP_INTERVAL_MS} apart, at most
 * {@link MAX_SWEEPS} times).
 *
 * @module
 */

/** How long to wait for EOF on the terminal after the leader was reaped and its session killed. */
export const DRAIN_DEADLINE_MS = 2000;
/** Re-checks for session members still dying before `exit` (5 ms apart, 2 s at most). */
export const SWEEP_INTERVAL_MS = 5;
export const MAX_SWEEPS = 400;

/** What {@link WindDown} needs of the session's parts. */
export interface WindDownHost {
  /** The program's processes (a `ProcessTree`). */
  readonly tree: {
    readonly initReaped: boolean;
    readonly lastKillAt: number;
    remaining(): number;
  };
  /** The terminal's reader (a `TerminalReader`). */
  readonly reader: {
    readonly eof: boolean;
    closable(): boolean;
    giveUp(): boolean;
  };
  /** True while reading is paused for a consumer or the terminal model (that output is still owed). */
  blocked(): boolean;
  /** Snapshot requests not yet answered. */
  snapshotsPending(): number;
  /** SIGKILLs every process of the program. */
  kill(): void;
  later(ms: number, fn: () => void): void;
  /** Everything is over: emit `exit`. Called once. */
  finish(): void;
}

/** Decides when the session ends; {@link check} whenever one of the conditions may have changed. */
export class WindDown {
  readonly #host: WindDownHost;
  #reaped = false;
  #finished = false;
  #sweeps = 0;

  constructor(host: WindDownHost) {
    this.#host = host;
  }

  /** True once {@link WindDownHost.finish} was called. */
  get finished(): boolean {
    return this.#finished;
  }

  /** The leader was reaped (and its session killed): EOF normally follows at once; if not, a deadline. */
  leaderReaped(): void {
    this.#reaped = true;
    if (!this.#host.reader.eof) this.#armDrainDeadline();
    this.check();
  }

  /** Ends the session if everything is over (or looks again shortly for processes still dying). */
  check(): void {
    const host = this.#host;
    if (this.#finished || !host.reader.eof || !this.#reaped || host.snapshotsPending() > 0) return;
    if (!host.tree.initReaped) return; // The tree's onInitReaped comes back here.
    if (!host.reader.closable()) return; // The reader thread lets go of the terminal first; `released` comes back.
    // A process killed a moment ago may still be tearing down (its fds closed, so EOF came, but not yet
    // dead). Give the kill a moment; sessions killed together then share the next /proc scan.
    if (performance.now() - host.tree.lastKillAt < SWEEP_INTERVAL_MS) {
      host.later(SWEEP_INTERVAL_MS, () => this.check());
      return;
    }
    if (this.#sweeps < MAX_SWEEPS && host.tree.remaining() > 0) {
      this.#sweeps++;
      host.kill();
      host.later(SWEEP_INTERVAL_MS, () => this.check());
      return;
    }
    this.#finished = true;
    host.finish();
  }

  /**
   * Someone outside the session holds the terminal open: stop waiting for EOF after a deadline. Not
   * while reading is paused: that output is still owed to a consumer, and one that never catches up is
   * handled by the overflow timer.
   */
  #armDrainDeadline(): void {
    this.#host.later(DRAIN_DEADLINE_MS, () => {
      const host = this.#host;
      if (host.reader.eof) return;
      if (host.blocked()) {
        this.#armDrainDeadline();
        return;
      }
      // The reader thread is asked to stop first: its EOF follows, or this deadline comes back without it.
      if (host.reader.giveUp()) this.#armDrainDeadline();
    });
  }
}
