/**
 * Whether a session's program waits for what is typed next: a process of its tree, in the foreground
 * group of its terminal, asleep in a read of that terminal, or in `select` on that terminal alone with no
 * timeout (readline, as python's REPL uses it). Read from `/proc` (the host's pids: a session
 * held by a keeper is seen the same), so a question the prompt patterns do not know (`read -p 'Proceed? '`,
 * a program's own `input('name: ')`, `bc`) ends an agent's wait at once instead of at its yield time.
 *
 * Only what the kernel says of the processes is used, never their output: a program cannot print its way
 * into it. A program blocked on the terminal and on nothing else is what "waits for input" means here.
 *
 * @module
 */

/** Syscall numbers whose arguments name what the process waits on. */
interface SyscallTable {
  /** read, readv: the descriptor is the first argument. */
  readonly read: readonly number[];
  /**
   * select, pselect6: waits on descriptors below the first argument; with 1, on descriptor 0 alone (what
   * readline does), and the fifth argument (the timeout) null: no timeout. poll and ppoll are not used:
   * which descriptors they wait on is in the process's memory (a build's jobserver or a program reading
   * two pipes waits so, with its stdin a terminal too).
   */
  readonly select: readonly number[];
}

/** Per architecture (the numbers differ); elsewhere the probe says no. */
const SYSCALLS: Readonly<Record<string, SyscallTable>> = {
  x86_64: { read: [0, 19], select: [23, 270] },
  aarch64: { read: [63, 65], select: [72] },
};

/** Most processes looked at in one tree (a fork bomb's tree is not walked to its end). */
const MAX_PROCESSES = 256;

/** Reads a /proc file, or null when it is gone or not readable (the process ended meanwhile). */
function read(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return null; // Ended, or not ours to read: nothing to say of it.
  }
}

/** `pid`'s children, from every thread's `children` list. */
function children(proc: string, pid: number): number[] {
  const out: number[] = [];
  let tasks: Iterable<Deno.DirEntry>;
  try {
    tasks = Deno.readDirSync(`${proc}/${pid}/task`);
  } catch {
    return out; // Gone.
  }
  for (const task of tasks) {
    const list = read(`${proc}/${pid}/task/${task.name}/children`);
    if (list === null) continue;
    for (const part of list.trim().split(/\s+/)) if (/^\d+$/.test(part)) out.push(Number(part));
  }
  return out;
}

/** The fields of `/proc/PID/stat` this needs (after the command's name, which may hold anything). */
function stat(proc: string, pid: number): { state: string; pgrp: number; tty: number; tpgid: number } | null {
  const text = read(`${proc}/${pid}/stat`);
  if (text === null) return null;
  const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { state: rest[0]!, pgrp: Number(rest[2]), tty: Number(rest[4]), tpgid: Number(rest[5]) };
}

/** True when descriptor `fd` of `pid` is the terminal `tty` (its device number, as /proc/PID/stat gives it). */
function isTerminal(proc: string, pid: number, fd: number, tty: number): boolean {
  try {
    return Deno.statSync(`${proc}/${pid}/fd/${fd}`).rdev === tty;
  } catch {
    return false; // Closed meanwhile, or not ours to look at.
  }
}

/** True when `pid` (asleep, in its terminal's foreground group) waits on that terminal. */
function waitsOnTerminal(proc: string, pid: number, tty: number, table: SyscallTable): boolean {
  const line = read(`${proc}/${pid}/syscall`);
  if (line === null) return false;
  const [nr, ...args] = line.trim().split(" ");
  const number = Number(nr);
  const arg = (i: number) => BigInt(args[i] ?? "-1");
  if (table.read.includes(number)) return isTerminal(proc, pid, Number(arg(0)), tty);
  if (!table.select.includes(number)) return false;
  return arg(0) === 1n && arg(4) === 0n && isTerminal(proc, pid, 0, tty);
}

/**
 * True when a process of the tree under `root` (the session's first process) waits for input from its
 * terminal (see the module documentation). False when it cannot tell (another architecture, /proc not
 * readable): the caller then waits as before.
 */
export function waitsForInput(root: number, proc = "/proc", arch: string = Deno.build.arch): boolean {
  const table = SYSCALLS[arch];
  if (table === undefined) return false;
  const queue = [root];
  for (let seen = 0; seen < queue.length && seen < MAX_PROCESSES; seen++) {
    const pid = queue[seen]!;
    const info = stat(proc, pid);
    if (info === null) continue;
    if (info.tty !== 0 && info.pgrp === info.tpgid && info.state === "S") {
      if (waitsOnTerminal(proc, pid, info.tty, table)) return true;
    }
    for (const child of children(proc, pid)) {
      if (queue.length >= MAX_PROCESSES) break;
      queue.push(child);
    }
  }
  return false;
}
