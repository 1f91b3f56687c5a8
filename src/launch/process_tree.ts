/**
 * `ProcessTree`: the processes of one launched program, as its session controls them: signals,
 * termination, kills, the reaping of a sandbox's init, what is still alive, and how the exit status reads.
 *
 * The session knows only this interface. Whether a sandbox launcher (bwrap) sits between it and the
 * program, and what that changes, is decided here:
 * - without a launcher the direct child is the program, the leader of the terminal's session;
 * - under bwrap the direct child is the launcher and the program is the sandbox's pid 2. Signals go to the
 *   program (or every process of the sandbox), never to the launcher's process group, which would die of
 *   them and take the sandbox with it; a kill is a SIGKILL of the sandbox's init (the kernel then ends its
 *   whole pid namespace) and the launcher exits by itself; bwrap reports a death by signal N as exit code
 *   128 + N, which reads as the signal when Specter sent N.
 *
 * @module
 */
import {
  childWatcher,
  libc,
  type SandboxInit,
  sandboxProgram,
  sendSignal,
  sessionMembers,
  signalDisposition,
  type SignalKeys,
  signalName,
  signalSandbox,
  signalSession,
  type WaitStatus,
} from "../pty/mod.ts";
import type { SignalName } from "../protocol/mod.ts";
import type { Ceilings } from "../ceilings/mod.ts";

/**
 * Under bwrap, SIGKILL goes to the sandbox's init and the launcher exits by itself once it reaped it. If
 * it has not after this long, the launcher is killed too (and the init, if any, left to the host's init).
 */
export const LAUNCHER_EXIT_MS = 2000;
/** How long a sandbox's init may take to be reaped after its launcher was (see {@link ProcessTree.leaderReaped}). */
export const INIT_REAP_MS = 2000;

/** What {@link ProcessTree.create} needs: the launch's processes and the session's timers. */
export interface ProcessTreeOptions {
  /** The direct child: the program, or the sandbox's launcher. */
  readonly pid: number;
  /** The direct child is a launcher between Specter and the program (bwrap), not the program itself. */
  readonly launcher: boolean;
  /** Under bwrap: the sandbox's init, held by a pidfd since the gate (null elsewhere or when unavailable). */
  readonly init: SandboxInit | null;
  /** The session's cgroup: it also holds what left the terminal's session (setsid, double forks). */
  readonly ceilings: Pick<Ceilings, "kill" | "remaining">;
  /** Releases the subreaper hold taken for the sandbox (see `holdSubreaper`), at {@link ProcessTree.close}. */
  readonly releaseSubreaper?: (() => void) | null;
  /** Runs `fn` after `ms` (the session's own timers, cleared when it finishes). */
  readonly later: (ms: number, fn: () => void) => void;
}

/** A signal as delivered: to which pid, and as what (SIGSTOP stands in for a TSTP the kernel would drop). */
export interface Delivered {
  readonly pid: number;
  readonly deliveredAs: SignalName;
}

/** The processes of one launched program (see the module documentation). */
export class ProcessTree {
  /** The direct child's pid (the terminal session's id). */
  readonly pid: number;
  readonly #launcher: boolean;
  readonly #init: SandboxInit | null;
  readonly #ceilings: ProcessTreeOptions["ceilings"];
  readonly #releaseSubreaper: (() => void) | null;
  readonly #later: ProcessTreeOptions["later"];
  /**
   * Signal numbers sent into the sandbox (bwrap reports a program's death by N as exit 128+N); null until
   * the first (most sessions are never signalled before their end, and a thousand may live in a process).
   */
  #sent: Set<number> | null = null;
  #lastKillAt = -Infinity;
  #reapedAt = -Infinity;
  #leaderReaped = false;
  #initReaped: boolean;
  #launcherTimer = false;
  #closed = false;

  #sentAdd(signal: number): void {
    (this.#sent ??= new Set()).add(signal);
  }

  constructor(options: ProcessTreeOptions) {
    this.pid = options.pid;
    this.#launcher = options.launcher;
    this.#init = options.init;
    this.#initReaped = options.init === null;
    this.#ceilings = options.ceilings;
    this.#releaseSubreaper = options.releaseSubreaper ?? null;
    this.#later = options.later;
  }

  /** When the last SIGKILL was sent (`performance.now()`), for the sweep before `exit`. */
  get lastKillAt(): number {
    return this.#lastKillAt;
  }

  /** True once a sandbox's init was reaped (by its launcher or by us), or when there is none. */
  get initReaped(): boolean {
    return this.#initReaped;
  }

  /**
   * Sends `signal` to the program. A TSTP whose action is the default goes as SIGSTOP: the kernel discards
   * it for an orphaned process group, and stopping is what it would have done. `null` when a sandboxed
   * program has already exited (its sandbox may still be winding down).
   */
  signal(signal: SignalName): Delivered | null {
    if (this.#init === null) {
      const deliveredAs = signal === "TSTP" && signalDisposition(this.pid, signal) === "default"
        ? "STOP"
        : signal;
      sendSignal(this.#launcher ? -this.pid : this.pid, deliveredAs);
      return { pid: this.pid, deliveredAs };
    }
    const program = sandboxProgram(this.#init);
    if (program === null) return null;
    try {
      const deliveredAs = signal === "TSTP" && signalDisposition(program.pid, signal) === "default"
        ? "STOP"
        : signal;
      if (program.signal(deliveredAs)) this.#sentAdd(libc().table.signals[deliveredAs]);
      return { pid: program.pid, deliveredAs };
    } finally {
      program.close();
    }
  }

  /**
   * Input went to the program's terminal: its line discipline turns its interrupt and quit keys (ctrl-c
   * and ctrl-\ by default) into SIGINT and SIGQUIT for the foreground group, while signals are on (ISIG).
   * Under a launcher a program killed by them exits as 128 + N (bwrap's report), which then reads as the
   * signal, as one Specter sent would. `keys` reads the terminal's keys now: in raw mode (an editor, fzf)
   * ctrl-c is a byte the program reads, and its own exit 130 must stay an exit code.
   */
  typed(bytes: Uint8Array, keys: () => SignalKeys | null): void {
    // Under bwrap even without its init's handle (a session a restarted daemon took back): bwrap reports.
    if (!this.#launcher) return;
    const now = keys();
    if (now === null) return;
    const signals = libc().table.signals;
    if (now.intr !== null && bytes.includes(now.intr)) this.#sentAdd(signals.INT);
    if (now.quit !== null && bytes.includes(now.quit)) this.#sentAdd(signals.QUIT);
  }

  /** SIGHUP, SIGTERM and SIGCONT (stopped processes must see the others) to every process of the program. */
  terminate(): void {
    const signals = ["HUP", "TERM", "CONT"] as const;
    if (this.#init !== null) {
      // The program and everything it started, inside the sandbox; never the launcher (see kill).
      signalSandbox(this.#init, signals);
      for (const signal of signals) this.#sentAdd(libc().table.signals[signal]);
    } else {
      signalSession(this.pid, signals);
    }
  }

  /** SIGKILLs every process of the tree and remembers when (see `sessionMembers`'s `notBefore`). */
  kill(): void {
    if (this.#init !== null && !this.#leaderReaped && this.#killSandbox()) return;
    const { at, signalled } = signalSession(this.pid, ["KILL"], this.#reapedAt);
    const detached = this.#ceilings.kill();
    if (signalled || detached > 0) this.#lastKillAt = signalled ? at : performance.now();
  }

  /**
   * SIGKILLs the sandbox's init: the kernel kills every process of its pid namespace, and the launcher
   * reaps the init and exits, to be reaped by us. Killing the launcher as well would orphan the init (a
   * zombie for the host's init to collect), so the launcher is killed only if it has not exited after
   * {@link LAUNCHER_EXIT_MS}. False when the init is gone already (the caller kills the session).
   */
  #killSandbox(): boolean {
    if (!this.#init!.handle.signal("KILL")) return false;
    this.#sentAdd(libc().table.signals.KILL);
    this.#lastKillAt = performance.now();
    if (!this.#launcherTimer) {
      this.#launcherTimer = true;
      this.#later(LAUNCHER_EXIT_MS, () => {
        if (this.#leaderReaped) return;
        const { at, signalled } = signalSession(this.pid, ["KILL"], this.#reapedAt);
        if (signalled) this.#lastKillAt = at;
      });
    }
    return true;
  }

  /**
   * The direct child was reaped at `at`. A sandbox's init is then either reaped by its launcher or ours
   * (we are subreaper): its `--die-with-parent` SIGKILL ends it, and `onInitReaped` runs once we reaped
   * it (ECHILD: not ours, the launcher did) or after {@link INIT_REAP_MS}, so that an init stuck in the
   * kernel cannot hold `exit` forever. Without an init, or one already gone, {@link initReaped} is true
   * at once and `onInitReaped` is not called.
   */
  leaderReaped(at: number, onInitReaped: () => void): void {
    this.#leaderReaped = true;
    this.#reapedAt = at;
    const init = this.#init;
    if (this.#initReaped || init === null) return;
    const done = () => {
      if (this.#initReaped) return;
      this.#initReaped = true;
      onInitReaped();
    };
    // Reaped already (by the launcher): its pid may be anyone's now, so it must not be waited for.
    if (!init.handle.exists()) {
      this.#initReaped = true;
      return;
    }
    childWatcher().watch(init.handle.pid, done);
    this.#later(INIT_REAP_MS, () => {
      if (this.#initReaped) return;
      childWatcher().unwatch(init.handle.pid);
      done();
    });
  }

  /** Processes still alive: the terminal's session (no earlier than the last kill or reap) and the cgroup. */
  remaining(): number {
    const notBefore = Math.max(this.#reapedAt, this.#lastKillAt);
    return sessionMembers(this.pid, notBefore).length + this.#ceilings.remaining();
  }

  /**
   * The program's exit as code and signal. Under a launcher a death by signal N arrives as exit code
   * 128 + N; when Specter sent N into the sandbox it reads as the signal it was (as without a sandbox).
   */
  exitStatus(status: WaitStatus): { code: number | null; signal: string | null } {
    const table = libc().table;
    let signal = status.kind === "signaled"
      ? signalName(status.signal, table) ?? `SIG${status.signal}`
      : null;
    let code = status.kind === "exited" ? status.code : null;
    if (this.#launcher && code !== null && code > 128 && this.#sent?.has(code - 128) === true) {
      signal = signalName(code - 128, table);
      if (signal !== null) code = null;
    }
    return { code, signal };
  }

  /** Lets go of the sandbox's init handle and the subreaper hold (once, when the session finished). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#init?.handle.close();
    this.#releaseSubreaper?.();
  }
}
