/**
 * The processes of a bwrap sandbox, reached without touching bwrap itself.
 *
 * Under bwrap Specter's child is the launcher (bwrap, after setpriv when Specter runs as root). It forks
 * the init of the sandbox's pid namespace, which forks the program (pid 2 in the namespace) and reaps
 * everything else. A signal sent to the launcher's process group or session kills the launcher, whose
 * `--die-with-parent` then SIGKILLs the whole sandbox and leaves its init to the host's init: so the
 * program never sees SIGTERM and its grace period is void. Instead, signals go to the namespace's
 * processes one by one, and SIGKILL goes to the namespace's init (the kernel then kills every process of
 * the namespace, and the launcher reaps the init and exits by itself).
 *
 * Every signal goes through a pidfd (`pidfd_open` + `pidfd_send_signal`): a pid read from `/proc` may be
 * reused by an unrelated host process before the signal is sent; a pidfd names one process for good,
 * and membership is checked after the pidfd was opened.
 *
 * @module
 */
import { libc } from "./_libc.ts";
import type { SignalName } from "../protocol/mod.ts";

/** One process, held by a pidfd (Linux 5.3+, glibc 2.36+). */
export class ProcessHandle {
  /** The process's pid in Specter's pid namespace. */
  readonly pid: number;
  #fd: number;

  private constructor(pid: number, fd: number) {
    this.pid = pid;
    this.#fd = fd;
  }

  /** Opens a pidfd for `pid`; `null` when the process is gone or pidfds are not available. */
  static open(pid: number): ProcessHandle | null {
    const open = libc().sym.pidfd_open;
    if (!open || !Number.isSafeInteger(pid) || pid <= 0) return null;
    const fd = open(pid, 0);
    return fd < 0 ? null : new ProcessHandle(pid, fd);
  }

  /** Sends `signal` to exactly this process. False when it has exited (or the handle is closed). */
  signal(signal: SignalName): boolean {
    const lib = libc();
    if (this.#fd < 0 || !lib.sym.pidfd_send_signal) return false;
    return lib.sym.pidfd_send_signal(this.#fd, lib.table.signals[signal], null, 0) === 0;
  }

  /** True while the process exists (running, or a zombie not yet reaped: its pid cannot be reused). */
  exists(): boolean {
    const lib = libc();
    if (this.#fd < 0 || !lib.sym.pidfd_send_signal) return false;
    return lib.sym.pidfd_send_signal(this.#fd, 0, null, 0) === 0;
  }

  /** Closes the pidfd (idempotent). */
  close(): void {
    if (this.#fd < 0) return;
    libc().sym.close(this.#fd);
    this.#fd = -1;
  }
}

/** The pid namespace of `pid`, as its `/proc/PID/ns/pid` link reads (`pid:[4026532123]`); null if gone. */
export function pidNamespaceOf(pid: number): string | null {
  try {
    return Deno.readLinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return null; // Gone, or not ours to inspect: either way not a member.
  }
}

/** The pid `pid` has inside its own (innermost) pid namespace, from `NSpid` in its status; null if gone. */
export function innermostPid(pid: number): number | null {
  let status: string;
  try {
    status = Deno.readTextFileSync(`/proc/${pid}/status`);
  } catch {
    return null; // It exited.
  }
  const line = /^NSpid:\s+([\d\s]+)$/m.exec(status)?.[1]?.trim().split(/\s+/);
  const last = Number(line?.at(-1));
  return Number.isSafeInteger(last) ? last : null;
}

/** A sandbox's pid namespace, known by its init (held by a pidfd) and the namespace's identity. */
export interface SandboxInit {
  /** The namespace's init (bwrap's inner process), held since before the program started. */
  readonly handle: ProcessHandle;
  /** Its pid namespace, as {@link pidNamespaceOf} reads it. */
  readonly namespace: string;
}

/**
 * Opens the sandbox's init while it is still held at bwrap's gate (so `pid` is certainly it). Returns
 * `null` when pidfds or `/proc` are not available: callers then fall back to signalling the session.
 */
export function holdSandboxInit(pid: number): SandboxInit | null {
  const handle = ProcessHandle.open(pid);
  if (handle === null) return null;
  const namespace = pidNamespaceOf(pid);
  if (namespace === null || namespace === pidNamespaceOf(Deno.pid)) {
    handle.close();
    return null;
  }
  return { handle, namespace };
}

/** The first child `/proc` lists for `pid` (its main thread's), or null: gone, none, or no such list. */
export function firstChildOf(pid: number): number | null {
  try {
    const first = Deno.readTextFileSync(`/proc/${pid}/task/${pid}/children`).trim().split(/\s+/)[0];
    return first !== undefined && /^\d+$/.test(first) ? Number(first) : null;
  } catch {
    return null; // Gone, or a kernel without the children list.
  }
}

/**
 * Finds and holds the init of a sandbox whose launcher (bwrap outside, `launcherPid`) runs already: a
 * session taken back after a restart, whose init was never held at a gate. The launcher's only child is
 * opened first, then checked: still the launcher's child (a pid reused in between is another process's
 * child, and the pidfd pins what it names) and in a pid namespace of its own. `null` when it cannot be
 * found or held (callers then signal the launcher's session, as before).
 */
export function findSandboxInit(launcherPid: number): SandboxInit | null {
  const first = firstChildOf(launcherPid);
  if (first === null) return null;
  const init = holdSandboxInit(first);
  if (init === null) return null;
  let parent: number | null = null;
  try {
    parent = Number(/^PPid:\s+(\d+)$/m.exec(Deno.readTextFileSync(`/proc/${first}/status`))?.[1]);
  } catch {
    // It exited after it was opened: not held.
  }
  if (parent !== launcherPid || !init.handle.exists()) {
    init.handle.close();
    return null;
  }
  return init;
}

/**
 * Calls `fn` with a handle on each live process of the sandbox's pid namespace except its init, found
 * in one `/proc` scan. Each candidate is opened first and checked after (its namespace, and `accept`):
 * a pid reused in between is either checked as what it now is, or the pidfd names a dead process. The
 * handle is closed after `fn` unless `fn` returns true (it keeps it).
 */
export function forEachSandboxProcess(
  init: SandboxInit,
  fn: (process: ProcessHandle) => boolean | void,
  accept: (pid: number) => boolean = () => true,
): void {
  for (const entry of Deno.readDirSync("/proc")) {
    const pid = Number(entry.name);
    if (!Number.isSafeInteger(pid) || pid === init.handle.pid || pid === Deno.pid) continue;
    if (pidNamespaceOf(pid) !== init.namespace) continue; // Cheap filter before opening anything.
    const handle = ProcessHandle.open(pid);
    if (handle === null) continue;
    let keep = false;
    try {
      if (pidNamespaceOf(pid) === init.namespace && accept(pid)) keep = fn(handle) === true;
    } finally {
      if (!keep) handle.close();
    }
  }
}

/** Sends each of `signals` to every process of the sandbox except its init; returns how many got them. */
export function signalSandbox(init: SandboxInit, signals: readonly SignalName[]): number {
  let reached = 0;
  forEachSandboxProcess(init, (process) => {
    let any = false;
    for (const signal of signals) any = process.signal(signal) || any;
    if (any) reached++;
  });
  return reached;
}

/** The program itself: the sandbox process whose pid inside the namespace is 2 (init's first child). */
export function sandboxProgram(init: SandboxInit): ProcessHandle | null {
  let found: ProcessHandle | null = null;
  forEachSandboxProcess(init, (process) => {
    if (found !== null) return false;
    found = process;
    return true;
  }, (pid) => innermostPid(pid) === PROGRAM_NS_PID);
  return found;
}

const PR_SET_CHILD_SUBREAPER = 36;
let subreaperHolds = 0;

/**
 * Makes Specter the reaper of its descendants' orphans while at least one hold is taken; the returned
 * function releases the hold (once). bwrap's launcher exits as soon as the program has, without waiting
 * for the namespace's init: the init would be reparented to the host's init and left a zombie there.
 * As subreaper Specter gets it instead and reaps it (by pid: `waitpid(-1)` would steal `Deno.Command`'s
 * children). Held only while bwrap sessions run: other orphans adopted meanwhile stay zombies until
 * Specter exits. Returns a no-op when `prctl` is not available (the init then goes to the host's init).
 */
export function holdSubreaper(): () => void {
  const prctl = libc().sym.prctl;
  if (!prctl || Deno.build.os !== "linux") return () => {};
  if (subreaperHolds++ === 0) prctl(PR_SET_CHILD_SUBREAPER, 1n, 0n, 0n, 0n);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--subreaperHolds === 0) prctl(PR_SET_CHILD_SUBREAPER, 0n, 0n, 0n, 0n);
  };
}

/** bwrap's init forks the program first, so it is pid 2 in the namespace (pids are not reused soon). */
const PROGRAM_NS_PID = 2;
