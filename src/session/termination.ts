/**
 * `Termination`: signals to the program and the ways a session is ended on request: `terminate` (SIGHUP
 * and SIGTERM, then SIGKILL after a grace) and `kill`, and whether the end was graceful or killed.
 *
 * It knows when the program's pid stops being safe to signal: once its leader is reaped the id may be
 * someone else's, so every later signal is refused.
 *
 * @module
 */
import type { SignalName } from "../protocol/mod.ts";
import type { Delivered, ProcessTree } from "../launch/mod.ts";

/** What termination needs of the session. */
export interface TerminationHost {
  /** The program's processes. */
  readonly tree: Pick<ProcessTree, "signal" | "terminate" | "kill">;
  /** Runs `fn` after `ms` (the session's timers). */
  readonly later: (ms: number, fn: () => void) => void;
}

/** The signal and stop state of one session. */
export class Termination {
  readonly #host: TerminationHost;
  #terminating = false;
  /** SIGKILL was sent while terminating, before the program ended: `exit.stop` is `killed`. */
  #killedWhileTerminating = false;
  #reaped = false;

  constructor(host: TerminationHost) {
    this.#host = host;
  }

  /** True once the program's leader was reaped: its pid may be reused, nothing is signalled any more. */
  get reaped(): boolean {
    return this.#reaped;
  }

  /** Records that the leader was reaped. */
  leaderReaped(): void {
    this.#reaped = true;
  }

  /**
   * Sends `signal` to the program; `null` when it cannot be delivered any more (reaped, or gone).
   * See `ProcessTree.signal` for TSTP sent as SIGSTOP.
   */
  signal(signal: SignalName): Delivered | null {
    return this.#reaped ? null : this.#host.tree.signal(signal);
  }

  /**
   * Starts ending the program (once): SIGHUP, SIGTERM and SIGCONT to every process, SIGKILL after
   * `graceMs` (0: at once). A later call may only bring SIGKILL closer: each schedules its own. Returns
   * false when there is nothing left to end (already reaped).
   */
  terminate(graceMs: number): boolean {
    if (this.#reaped) return false;
    if (!this.#terminating) {
      this.#terminating = true;
      this.#host.tree.terminate();
    }
    if (graceMs <= 0) this.kill();
    else this.#host.later(graceMs, () => this.kill());
    return true;
  }

  /** SIGKILLs every process of the program (its session, its sandbox, its cgroup). */
  kill(): void {
    if (this.#terminating && !this.#reaped) this.#killedWhileTerminating = true;
    this.#host.tree.kill();
  }

  /** How a requested end went, for `exit.stop`; `undefined` when nobody asked the session to end. */
  get stop(): "killed" | "graceful" | undefined {
    if (!this.#terminating) return undefined;
    return this.#killedWhileTerminating ? "killed" : "graceful";
  }
}
