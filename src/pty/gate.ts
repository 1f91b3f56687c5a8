/**
 * A launch gate: the executed helper (bwrap) sets everything up, tells us its child's pid on an info
 * pipe, then blocks reading a second pipe right before it runs the program. While it waits, the caller
 * inspects the prepared process (its mount table, its cgroup) and either releases it or kills it. The
 * program's first instruction comes after the check, never before.
 *
 * Synchronous on purpose: the gate lasts a few milliseconds of the helper's own setup, and `spawn()` is
 * synchronous.
 *
 * @module
 */
import { SpawnError } from "../errors.ts";
import { closeQuietly, libc } from "./_libc.ts";
import { setCloseOnExec } from "./pty.ts";

/** How long the helper may take to set up before the gate gives up (it is then killed). */
export const GATE_DEADLINE_MS = 10_000;

/** The two pipes of a gate; the `child*` ends go to the helper, the others stay here. */
export interface GatePipes {
  /** Which ends are still open here (each is closed exactly once: a second close could hit a reused fd). */
  readonly open: { child: boolean; ours: boolean };
  /** Read end the helper blocks on (pass as its block fd). */
  readonly childBlock: number;
  /** Write end the helper writes its info to (pass as its info fd). */
  readonly childInfo: number;
  /** Our end: one byte written here releases the helper. */
  readonly release: number;
  /** Our end: the helper's info, then EOF. */
  readonly info: number;
}

function pipe(): [number, number] {
  const lib = libc();
  const pair = new Int32Array(2);
  if (lib.sym.pipe(pair) !== 0) throw new SpawnError("E_SPAWN", `pipe() failed with errno ${lib.errno()}`);
  setCloseOnExec(pair[0]!);
  setCloseOnExec(pair[1]!);
  return [pair[0]!, pair[1]!];
}

/** Opens the gate's pipes (all close-on-exec; spawn dup2s the child ends into place). */
export function openGate(): GatePipes {
  const [childBlock, release] = pipe();
  try {
    const [info, childInfo] = pipe();
    return { childBlock, childInfo, release, info, open: { child: true, ours: true } };
  } catch (error: unknown) {
    closeQuietly(childBlock);
    closeQuietly(release);
    throw error;
  }
}

/** Closes the ends the helper owns now (call right after spawning it). */
export function closeChildEnds(gate: GatePipes): void {
  if (!gate.open.child) return;
  gate.open.child = false;
  closeQuietly(gate.childBlock);
  closeQuietly(gate.childInfo);
}

/** Closes our ends. Closing `release` without writing makes a waiting helper's read return 0 (EOF). */
export function closeGate(gate: GatePipes): void {
  closeChildEnds(gate);
  if (!gate.open.ours) return;
  gate.open.ours = false;
  closeQuietly(gate.release);
  closeQuietly(gate.info);
}

/** Blocks this thread for `ms` (fractions allowed): the gate's waits are short and synchronous. */
export function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Reads the helper's info until EOF (bwrap closes it once written) and returns it, or `null` when the
 * helper wrote nothing (it failed before starting its child). Throws `E_SPAWN` past the deadline.
 */
export function readInfo(gate: GatePipes, deadline: number): string | null {
  const lib = libc();
  const chunks: Uint8Array[] = [];
  const buffer = new Uint8Array(4096);
  const fds = new Uint8Array(8);
  const view = new DataView(fds.buffer);
  for (let total = 0;;) {
    view.setInt32(0, gate.info, true);
    view.setInt16(4, 1, true); // POLLIN
    const left = Math.max(0, deadline - performance.now());
    const ready = lib.sym.poll_now(fds, 1n, Math.ceil(left));
    if (ready === 0) throw new SpawnError("E_SPAWN", "The sandbox helper did not report its child in time");
    if (ready < 0) continue; // EINTR: poll again with the time left.
    const n = Number(lib.sym.read(gate.info, buffer, BigInt(buffer.length)));
    if (n < 0) continue; // EINTR
    if (n === 0) break;
    total += n;
    if (total > 1 << 16) throw new SpawnError("E_SPAWN", "The sandbox helper's info is too long");
    chunks.push(buffer.slice(0, n));
  }
  if (chunks.length === 0) return null;
  return new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
}

/**
 * Waits until `pid` is blocked reading its fd `blockFd` (from `/proc/<pid>/syscall`: `read` is 0 on
 * x86-64 and 63 on arm64). Returns false when the process is gone (its setup failed); throws `E_SPAWN`
 * past the deadline.
 */
export function waitBlocked(pid: number, blockFd: number, deadline: number): boolean {
  const read = Deno.build.arch === "aarch64" ? 63 : 0;
  const expected = `${read} 0x${blockFd.toString(16)} `;
  // Fine-grained: bwrap's setup takes a few milliseconds, and every poll is one small /proc read.
  for (let delay = 0.05;; delay = Math.min(delay * 2, 0.25)) {
    let text: string;
    try {
      text = Deno.readTextFileSync(`/proc/${pid}/syscall`);
    } catch (error: unknown) {
      // Gone, or dying (between the open and the read the kernel answers ESRCH, which Deno reports as a
      // plain Error): its setup failed, and it says why on the terminal. Anything else (no permission to
      // look at a process that is still there) must not let it run unchecked.
      if (error instanceof Deno.errors.NotFound || isZombie(pid)) return false;
      throw new SpawnError("E_SPAWN", `Could not watch the sandbox's setup (${String(error)})`, {
        cause: error,
      });
    }
    if (text.startsWith(expected)) return true;
    // Dead but not yet reaped by bwrap (a zombie reads as "-1 …", not in any call): its setup failed.
    if (text.startsWith("-1 ") && isZombie(pid)) return false;
    if (performance.now() > deadline) {
      throw new SpawnError("E_SPAWN", "The sandbox helper did not finish setting up in time");
    }
    sleepMs(delay);
  }
}

/** True when `pid` is a zombie or gone (state `Z` or `X` in `/proc/<pid>/stat`). */
function isZombie(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state === "Z" || state === "X";
  } catch {
    return true; // Gone between the two reads.
  }
}

/** Lets the helper go on: it reads one byte and runs the program. */
export function releaseGate(gate: GatePipes): void {
  const lib = libc();
  for (;;) {
    const n = Number(lib.sym.write(gate.release, new Uint8Array([0x2a]), 1n));
    if (n === 1) return;
    if (lib.errno() === 4) continue; // EINTR
    if (lib.errno() === 32) return; // EPIPE: the helper died meanwhile; the session reports its exit.
    throw new SpawnError("E_SPAWN", `Releasing the sandbox helper failed with errno ${lib.errno()}`);
  }
}
