/**
 * Signals, reaping and whole-session cleanup for the programs Specter starts.
 *
 * Reaping uses `waitpid(pid, WNOHANG|WUNTRACED|WCONTINUED)` on our own pids only, triggered by SIGCHLD
 * (plus a slow safety tick): `waitpid(-1)` would steal the children of `Deno.Command`.
 *
 * @module
 */
import { cString, libc } from "./_libc.ts";
import type { SignalName } from "../protocol/mod.ts";
import { decodeWaitStatus, type WaitStatus } from "./platform.ts";

/** Sends `signal` to `pid` (negative: a process group). Returns false when no such process exists. */
export function sendSignal(pid: number, signal: SignalName): boolean {
  const lib = libc();
  return lib.sym.kill(pid, lib.table.signals[signal]) === 0;
}

const SNAPSHOT_MS = 5;
interface Snapshot {
  readonly startedAt: number;
  readonly endedAt: number;
  /** Session id → pids, zombies included (sorted out per session when asked: {@link split}). */
  readonly bySession: Map<number, number[]>;
  /** Session id → its live pids and its zombies, once asked for. */
  readonly split: Map<number, { live: number[]; zombies: number }>;
}

let snapshot: Snapshot | undefined;

/**
 * Maps session id → pids by listing `/proc` once and asking the kernel each pid's session (`getsid`, one
 * system call: reading every `/proc/<pid>/stat` cost ~2.5 ms for 72 processes here, and a scan runs for
 * every session that ends). Many sessions ending together (1000 at once in the sessions benchmark) share
 * one scan: a snapshot is reused for {@link SNAPSHOT_MS} ms after it was taken, but only by callers whose
 * question is not newer than the scan (`notBefore`: a scan that began before your last kill cannot tell
 * whether the kill worked).
 */
function scanSessions(notBefore: number): Snapshot {
  if (
    snapshot && snapshot.startedAt >= notBefore && performance.now() - snapshot.endedAt < SNAPSHOT_MS
  ) {
    return snapshot;
  }
  const lib = libc();
  const startedAt = performance.now();
  const bySession = new Map<number, number[]>();
  for (const entry of Deno.readDirSync("/proc")) {
    const pid = Number(entry.name);
    if (!Number.isInteger(pid) || pid === Deno.pid) continue;
    const sid = lib.sym.getsid(pid);
    if (sid < 0) continue; // The process exited while we were scanning.
    const members = bySession.get(sid);
    if (members) members.push(pid);
    else bySession.set(sid, [pid]);
  }
  snapshot = { startedAt, endedAt: performance.now(), bySession, split: new Map() };
  return snapshot;
}

/** Session `sid`'s live pids and zombies in `scan` (zombies still count against RLIMIT_NPROC). */
function split(scan: Snapshot, sid: number): { live: number[]; zombies: number } {
  let found = scan.split.get(sid);
  if (found === undefined) {
    found = { live: [], zombies: 0 };
    for (const pid of scan.bySession.get(sid) ?? []) {
      const stat = readStat(pid);
      // Gone since the scan, or its pid already reused by a process of another session.
      if (stat === null || stat.sid !== sid) continue;
      if (stat.dead) found.zombies++;
      else found.live.push(pid);
    }
    scan.split.set(sid, found);
  }
  return found;
}

/** Bytes of one `/proc/<pid>/stat` (a few hundred in practice; the rest of a longer one is not needed). */
const STAT_BUFFER = new Uint8Array(4096);
const SPACE = 0x20;
const CLOSE_PAREN = 0x29;

/**
 * The state and session id of `pid` from `/proc/<pid>/stat`, read through libc into one buffer (a
 * `Deno.readTextFileSync` cost 36 µs here); null when it is gone or the line is not understood. Read only
 * for the processes of the session asked about (the scan itself asks `getsid`).
 */
function readStat(pid: number): { dead: boolean; sid: number } | null {
  const lib = libc();
  const fd = lib.sym.open(cString(`/proc/${pid}/stat`), lib.table.o.CLOEXEC, 0);
  if (fd < 0) return null;
  let n: number;
  try {
    n = Number(lib.sym.read(fd, STAT_BUFFER, BigInt(STAT_BUFFER.length)));
  } finally {
    lib.sym.close(fd);
  }
  // "pid (comm) state ppid pgrp session …"; comm may itself contain spaces and parentheses.
  let at = n - 1;
  while (at >= 0 && STAT_BUFFER[at] !== CLOSE_PAREN) at--;
  if (at < 0 || at + 2 >= n) return null;
  const state = STAT_BUFFER[at + 2]!;
  // Fields after the state: ppid, pgrp, then the session id.
  let field = 0;
  let sid = 0;
  for (let i = at + 3; i < n; i++) {
    const byte = STAT_BUFFER[i]!;
    if (byte === SPACE) {
      if (++field > 3) break;
    } else if (field === 3) {
      if (byte < 0x30 || byte > 0x39) return null;
      sid = sid * 10 + (byte - 0x30);
    }
  }
  if (field < 3) return null;
  return { dead: state === 0x5a /* Z */ || state === 0x58, /* X */ sid };
}

/**
 * Lists the live (not zombie) pids whose session id is `sid`, from `/proc` (Linux), using a scan that
 * started at or after `notBefore` (a `performance.now()` value; default: any recent scan). Elsewhere only
 * the process group can be reached, so this returns an empty list and callers signal `-sid` as well.
 */
export function sessionMembers(sid: number, notBefore = -Infinity): number[] {
  if (Deno.build.os !== "linux") return [];
  return split(scanSessions(notBefore), sid).live;
}

/** What {@link signalSession} did. */
export interface SessionSignalled {
  /** `performance.now()` by which the signals were sent. */
  readonly at: number;
  /** False when no process of the session was found to signal. */
  readonly signalled: boolean;
}

/**
 * Sends each of `signals` to every process of session `sid`: its process group, then each member
 * found in a `/proc` scan that started at or after `notBefore`.
 */
export function signalSession(
  sid: number,
  signals: readonly SignalName[],
  notBefore = -Infinity,
): SessionSignalled {
  const members = sessionMembers(sid, notBefore);
  let signalled = members.length > 0;
  for (const signal of signals) {
    if (sendSignal(-sid, signal)) signalled = true;
    for (const pid of members) sendSignal(pid, signal);
  }
  return { at: performance.now(), signalled };
}

/** Resource use of a whole session (every live member), as far as `/proc` shows it. */
export interface TreeUsage {
  /** Processes, counting zombies not yet reaped (as RLIMIT_NPROC does). */
  readonly processes: number;
  /** Sum of resident set sizes, in bytes. */
  readonly rssBytes: number;
  /** Sum of user + system CPU time, in seconds. */
  readonly cpuSeconds: number;
}

// USER_HZ: the unit of utime/stime in /proc/<pid>/stat, 100 on every Linux architecture.
const USER_HZ = 100;

/**
 * Measures session `sid` from `/proc` (Linux; `null` elsewhere). Reads each member's `status` (VmRSS,
 * in kB whatever the page size) and `stat` (utime + stime).
 */
export function treeUsage(sid: number): TreeUsage | null {
  if (Deno.build.os !== "linux") return null;
  const scan = scanSessions(performance.now());
  const { live, zombies } = split(scan, sid);
  let processes = zombies; // RLIMIT_NPROC counts them too.
  let rssBytes = 0;
  let ticks = 0;
  for (const pid of live) {
    try {
      const status = Deno.readTextFileSync(`/proc/${pid}/status`);
      const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // Fields after "(comm)": state is [0], utime [11], stime [12].
      ticks += Number(fields[11]) + Number(fields[12]);
      rssBytes += Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? 0) * 1024;
      processes++;
    } catch {
      // The process exited between the scan and the read: it uses nothing any more.
    }
  }
  return { processes, rssBytes, cpuSeconds: ticks / USER_HZ };
}

/** What a process does on receiving a signal. */
export type Disposition = "default" | "ignored" | "caught" | "unknown";

/** Reads how `pid` handles `signal` from `/proc/PID/status` (Linux); `unknown` elsewhere or on failure. */
export function signalDisposition(pid: number, signal: SignalName): Disposition {
  if (Deno.build.os !== "linux") return "unknown";
  let status: string;
  try {
    status = Deno.readTextFileSync(`/proc/${pid}/status`);
  } catch {
    return "unknown"; // Gone already, or /proc is not mounted.
  }
  const bit = 1n << BigInt(libc().table.signals[signal] - 1);
  const mask = (name: string) =>
    BigInt("0x" + (new RegExp(`^${name}:\\s*([0-9a-f]+)$`, "m").exec(status)?.[1] ?? "0"));
  if ((mask("SigCgt") & bit) !== 0n) return "caught";
  if ((mask("SigIgn") & bit) !== 0n) return "ignored";
  return "default";
}

/** Raises this process's soft open-file limit to the hard limit, so 1000+ sessions fit. */
export function raiseOpenFileLimit(): number {
  const { sym, table } = libc();
  const buf = new BigUint64Array(2);
  const bytes = new Uint8Array(buf.buffer);
  if (sym.getrlimit(table.rlimit.RLIMIT_NOFILE, bytes) !== 0) return -1;
  let want = buf[1]!;
  if (table.maxNoFile !== null && want > BigInt(table.maxNoFile)) want = BigInt(table.maxNoFile);
  if (want > buf[0]!) {
    buf[0] = want;
    if (sym.setrlimit(table.rlimit.RLIMIT_NOFILE, bytes) !== 0) return Number(buf[0]);
  }
  return Number(buf[0]);
}

/** Called with each status change of a watched child; after `exited`/`signaled` the pid is unwatched. */
export type StatusListener = (status: WaitStatus, at: number) => void;

/**
 * What tells a session that its program ended: the {@link ChildWatcher} for our own children, or whoever
 * spawned the program for us (the daemon's keeper, which reaps it and reports the status).
 */
export interface ExitWatcher {
  /** Starts watching `pid`; `listener` runs on the JS thread for each status change. */
  watch(pid: number, listener: StatusListener): void;
  /** Collects a pending status of `pid` now; true when it ended. */
  look(pid: number): boolean;
}

const SAFETY_TICK_MS = 1000;

/** Watches our own children for exit, stop and continue. One instance per process: {@link childWatcher}. */
export class ChildWatcher implements ExitWatcher {
  #listeners = new Map<number, StatusListener>();
  #status = new Int32Array(1);
  #timer: ReturnType<typeof setInterval> | undefined;
  #scheduled = false;
  // Many triggers (one watch() per spawn, SIGCHLD bursts) collapse into one check per microtask turn:
  // 1000 spawns must not cost 1000 × 1000 waitpid calls.
  #onSignal = (): void => {
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      this.check();
    });
  };

  /** Starts watching `pid`; `listener` runs on the JS thread for each status change. */
  watch(pid: number, listener: StatusListener): void {
    if (this.#listeners.size === 0) {
      Deno.addSignalListener("SIGCHLD", this.#onSignal);
      // SIGCHLD can coalesce or race the listener's installation: a slow tick catches anything missed.
      const timer = setInterval(this.#onSignal, SAFETY_TICK_MS);
      Deno.unrefTimer(timer);
      this.#timer = timer;
    }
    this.#listeners.set(pid, listener);
    this.#onSignal(); // The child may have changed state before we listened.
  }

  /** Stops watching `pid` (does not reap it). */
  unwatch(pid: number): void {
    if (!this.#listeners.delete(pid) || this.#listeners.size > 0) return;
    Deno.removeSignalListener("SIGCHLD", this.#onSignal);
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Collects pending status changes of every watched child. */
  check(): void {
    this.#collect([...this.#listeners]);
  }

  /**
   * Collects a pending status change of `pid` alone, if it is watched. A hint that it may have ended (its
   * terminal reached EOF): SIGCHLD reaches a listener only after the event loop's next turn (2-3 ms here),
   * while one `waitpid` costs microseconds. Returns true when `pid` was reaped.
   */
  look(pid: number): boolean {
    const listener = this.#listeners.get(pid);
    if (listener === undefined) return false;
    this.#collect([[pid, listener]]);
    return !this.#listeners.has(pid);
  }

  #collect(watched: readonly [number, StatusListener][]): void {
    const lib = libc();
    const { WNOHANG, WUNTRACED, WCONTINUED } = lib.table.wait;
    // Collect every change first, then dispatch: listeners of one batch share the time `at`, so that a
    // thousand sessions reaped together can share one /proc scan taken after all of them.
    const changes: [StatusListener, WaitStatus][] = [];
    for (const [pid, listener] of watched) {
      for (;;) {
        const result = lib.sym.waitpid(pid, this.#status, WNOHANG | WUNTRACED | WCONTINUED);
        if (result === 0) break; // No change.
        if (result < 0) {
          if (lib.errno() === lib.table.errno.EINTR) continue;
          // ECHILD: not our child any more (should not happen); report it gone rather than hang.
          this.unwatch(pid);
          changes.push([listener, { kind: "signaled", signal: 0 }]);
          break;
        }
        const status = decodeWaitStatus(this.#status[0]!, lib.table);
        const final = status.kind === "exited" || status.kind === "signaled";
        if (final) this.unwatch(pid);
        changes.push([listener, status]);
        if (final) break;
      }
    }
    const at = performance.now();
    for (const [listener, status] of changes) listener(status, at);
  }
}

let watcher: ChildWatcher | undefined;

/** The process-wide child watcher. */
export function childWatcher(): ChildWatcher {
  return watcher ??= new ChildWatcher();
}
