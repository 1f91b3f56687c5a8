/**
 * Opening a pseudo-terminal pair and setting its window size.
 *
 * @module
 */
import { SpawnError } from "../errors.ts";
import { closeQuietly, libc } from "./_libc.ts";

/** A freshly opened terminal pair. The master is non-blocking and close-on-exec. */
export interface PtyPair {
  /** The master fd: Specter reads the program's output here and writes its input. */
  readonly master: number;
  /** The slave fd, close-on-exec; close it in the parent once the child has opened the slave path. */
  readonly slave: number;
  /** The slave's path (e.g. `/dev/pts/3`), opened by the child so it becomes its controlling terminal. */
  readonly path: string;
}

/** Encodes a `struct winsize` (rows, cols, xpixel, ypixel as unsigned shorts, native endian). */
export function winsize(cols: number, rows: number): Uint8Array<ArrayBuffer> {
  const buf = new Uint8Array(8);
  const view = new Uint16Array(buf.buffer);
  view[0] = rows;
  view[1] = cols;
  return buf;
}

function addFdFlags(fd: number, getCmd: number, setCmd: number, flags: number): boolean {
  const { fcntl } = libc();
  const current = fcntl(fd, getCmd, 0);
  return current >= 0 && fcntl(fd, setCmd, current | flags) >= 0;
}

/** Marks `fd` close-on-exec so that no other child (ours or Deno's) inherits it. */
export function setCloseOnExec(fd: number): boolean {
  const { F_GETFD, F_SETFD, FD_CLOEXEC } = libc().table.fcntl;
  return addFdFlags(fd, F_GETFD, F_SETFD, FD_CLOEXEC);
}

/** Puts `fd` in non-blocking mode. */
export function setNonBlocking(fd: number): boolean {
  const { table } = libc();
  return addFdFlags(fd, table.fcntl.F_GETFL, table.fcntl.F_SETFL, table.o.NONBLOCK);
}

/**
 * A unix socket pair (`stream`, or `seqpacket` keeping message boundaries), both ends close-on-exec. Throws
 * a `SpawnError` with `code` when it cannot be made.
 */
export function unixSocketPair(
  type: "stream" | "seqpacket",
  code: "E_SPAWN" | "E_FD_PASSING",
): [number, number] {
  const lib = libc();
  const pair = new Int32Array(2);
  const { AF_UNIX, SOCK_STREAM, SOCK_SEQPACKET } = lib.table.socket;
  const kind = type === "stream" ? SOCK_STREAM : SOCK_SEQPACKET;
  if (lib.sym.socketpair(AF_UNIX, kind, 0, new Uint8Array(pair.buffer)) !== 0) {
    throw new SpawnError(code, `socketpair() failed with errno ${lib.errno()}`);
  }
  const ends: [number, number] = [pair[0]!, pair[1]!];
  if (!setCloseOnExec(ends[0]) || !setCloseOnExec(ends[1])) {
    const errno = lib.errno();
    for (const fd of ends) closeQuietly(fd);
    throw new SpawnError(code, `Could not make the socket pair close-on-exec (errno ${errno})`);
  }
  return ends;
}

/** Opens a pipe whose ends are both non-blocking and close-on-exec: `[read, write]` (a wake-up channel). */
export function openWakePipe(): [number, number] {
  const pair = new Int32Array(2);
  const lib = libc();
  if (lib.sym.pipe(pair) !== 0) throw new Error(`pipe() failed with errno ${lib.errno()}`);
  for (const fd of pair) {
    setCloseOnExec(fd);
    setNonBlocking(fd);
  }
  return [pair[0]!, pair[1]!];
}

const NAME_BUFFER = new Uint8Array(4096);

/** Opens a terminal pair of `cols`×`rows` (throws `E_PTY_OPEN`). */
export function openPty(cols: number, rows: number): PtyPair {
  const lib = libc();
  const master = new Int32Array(1);
  const slave = new Int32Array(1);
  // openpty() writes the name with strcpy and no length: give it far more than any tty path needs.
  // One buffer serves every call (spawning is synchronous): 1000 spawns must not leave 4 MiB of garbage.
  const name = NAME_BUFFER;
  if (lib.openpty(master, slave, name, null, winsize(cols, rows)) !== 0) {
    const errno = lib.errno();
    throw new SpawnError("E_PTY_OPEN", `openpty() failed with errno ${errno}`, { details: { errno } });
  }
  const [m, s] = [master[0]!, slave[0]!];
  // The pair is briefly inheritable between openpty() and here; Specter spawns only from the JS thread.
  if (!setCloseOnExec(m) || !setCloseOnExec(s) || !setNonBlocking(m)) {
    const errno = lib.errno();
    closeQuietly(m);
    closeQuietly(s);
    throw new SpawnError("E_PTY_OPEN", `fcntl() on the new terminal failed with errno ${errno}`, {
      details: { errno },
    });
  }
  const path = new TextDecoder().decode(name.subarray(0, name.indexOf(0)));
  return { master: m, slave: s, path };
}

/** Sets the terminal size; the kernel sends SIGWINCH to the foreground process group. */
export function setWindowSize(master: number, cols: number, rows: number): boolean {
  const lib = libc();
  return lib.ioctl(master, lib.table.ioctl.TIOCSWINSZ, winsize(cols, rows)) === 0;
}

/** Reads the terminal size as `{ cols, rows }`, or `null` when the ioctl fails. */
export function getWindowSize(fd: number): { cols: number; rows: number } | null {
  const lib = libc();
  const buf = new Uint8Array(8);
  if (lib.ioctl(fd, lib.table.ioctl.TIOCGWINSZ, buf) !== 0) return null;
  const view = new Uint16Array(buf.buffer);
  return { rows: view[0]!, cols: view[1]! };
}

/** The keys a terminal's line discipline now turns into SIGINT and SIGQUIT (see {@link signalKeys}). */
export interface SignalKeys {
  /** The byte that raises SIGINT, or null (signals off: no ISIG, as in raw mode; or the key disabled). */
  readonly intr: number | null;
  /** The byte that raises SIGQUIT, or null. */
  readonly quit: number | null;
}

/**
 * The keys that raise SIGINT and SIGQUIT on the terminal of `fd` (a pty master reads its slave's modes), or
 * null when `fd` is no terminal. A program in raw mode reads ctrl-c as a byte: no signal is raised.
 */
export function signalKeys(fd: number): SignalKeys | null {
  const lib = libc();
  const layout = lib.table.termios;
  const buf = new Uint8Array(layout.size);
  if (lib.ioctl(fd, layout.get, buf) !== 0) return null;
  const view = new DataView(buf.buffer);
  const lflag = layout.lflagBytes === 8
    ? Number(view.getBigUint64(layout.lflagOffset, true) & 0xffffffffn)
    : view.getUint32(layout.lflagOffset, true);
  if ((lflag & layout.ISIG) === 0) return { intr: null, quit: null };
  const key = (index: number) => {
    const value = buf[layout.ccOffset + index]!;
    return value === layout.disabled ? null : value;
  };
  return { intr: key(layout.VINTR), quit: key(layout.VQUIT) };
}
