/**
 * Unix socket endpoints by path, through libc: what the daemon and its keeper listen on. `Deno.listen`
 * gives no descriptor, so neither peer credentials (`SO_PEERCRED`) nor descriptor passing would be
 * possible on its connections. Linux only (the `sockaddr_un` layout and flag values are Linux's).
 *
 * Every descriptor made here is non-blocking and close-on-exec.
 *
 * @module
 */
import { SpawnError } from "../errors.ts";
import { closeQuietly, cString, libc } from "./_libc.ts";

/** Linux values (<sys/socket.h>, <fcntl.h>, <sys/file.h>); each is checked against Python's in a test. */
export const LINUX_UNIX_SOCKET = {
  SOCK_NONBLOCK: 0o4000,
  SOCK_CLOEXEC: 0o2000000,
  SHUT_WR: 1,
  O_RDWR: 2,
  O_CREAT: 0o100,
  O_NOFOLLOW: 0o400000,
  O_CLOEXEC: 0o2000000,
  LOCK_EX: 2,
  LOCK_NB: 4,
  EWOULDBLOCK: 11,
  ECONNREFUSED: 111,
  ENOENT: 2,
} as const;

/** `sun_path` holds 108 bytes on Linux, the terminating NUL included. */
export const MAX_SOCKET_PATH = 107;

function linuxOnly(what: string): void {
  if (Deno.build.os !== "linux") {
    throw new SpawnError("E_PLATFORM_UNSUPPORTED", `${what} is implemented for Linux only`);
  }
}

function address(path: string): Uint8Array<ArrayBuffer> {
  const bytes = new TextEncoder().encode(path);
  if (bytes.length > MAX_SOCKET_PATH || bytes.includes(0)) {
    throw new SpawnError("E_FD_PASSING", `Socket path "${path}" is longer than ${MAX_SOCKET_PATH} bytes`, {
      details: { path },
    });
  }
  const out = new Uint8Array(110); // sa_family_t + sun_path[108]
  new DataView(out.buffer).setUint16(0, libc().table.socket.AF_UNIX, true);
  out.set(bytes, 2);
  return out;
}

function kind(type: "stream" | "seqpacket"): number {
  const { SOCK_STREAM, SOCK_SEQPACKET } = libc().table.socket;
  return (type === "stream" ? SOCK_STREAM : SOCK_SEQPACKET) | LINUX_UNIX_SOCKET.SOCK_NONBLOCK |
    LINUX_UNIX_SOCKET.SOCK_CLOEXEC;
}

function newSocket(type: "stream" | "seqpacket"): number {
  const lib = libc();
  const fd = lib.sym.socket(lib.table.socket.AF_UNIX, kind(type), 0);
  if (fd < 0) throw new SpawnError("E_FD_PASSING", `socket() failed with errno ${lib.errno()}`);
  return fd;
}

/**
 * Binds and listens on `path` (which must not exist: the caller removes a stale socket first). The socket
 * file gets the mode the umask leaves; callers put it in a 0700 directory and check peers' credentials.
 */
export function listenUnix(path: string, type: "stream" | "seqpacket", backlog = 128): number {
  linuxOnly("A unix socket listener");
  const lib = libc();
  const fd = newSocket(type);
  const addr = address(path);
  if (lib.sym.bind(fd, addr, addr.length) !== 0 || lib.sym.listen(fd, backlog) !== 0) {
    const errno = lib.errno();
    closeQuietly(fd);
    throw new SpawnError("E_FD_PASSING", `Listening on "${path}" failed with errno ${errno}`, {
      details: { path, errno },
    });
  }
  return fd;
}

/** Accepts one connection (non-blocking, close-on-exec), or returns null when none is waiting. */
export function acceptUnix(listener: number): number | null {
  const lib = libc();
  const accept4 = lib.sym.accept4;
  if (!accept4) throw new SpawnError("E_FFI", "libc has no accept4()");
  for (;;) {
    const fd = accept4(
      listener,
      null,
      null,
      LINUX_UNIX_SOCKET.SOCK_NONBLOCK | LINUX_UNIX_SOCKET.SOCK_CLOEXEC,
    );
    if (fd >= 0) return fd;
    const errno = lib.errno();
    if (errno === lib.table.errno.EINTR) continue;
    if (errno === lib.table.errno.EAGAIN) return null;
    throw new SpawnError("E_FD_PASSING", `accept4() failed with errno ${errno}`, { details: { errno } });
  }
}

/**
 * Connects to `path`. Returns null when nobody listens there (no such file, or connection refused: a
 * stale socket); throws `E_FD_PASSING` otherwise. The connection is made blocking-free: a unix socket
 * connects at once or fails.
 */
export function connectUnix(path: string, type: "stream" | "seqpacket"): number | null {
  linuxOnly("A unix socket connection");
  const lib = libc();
  const fd = newSocket(type);
  const addr = address(path);
  if (lib.sym.connect(fd, addr, addr.length) === 0) return fd;
  const errno = lib.errno();
  closeQuietly(fd);
  if (errno === LINUX_UNIX_SOCKET.ENOENT || errno === LINUX_UNIX_SOCKET.ECONNREFUSED) return null;
  throw new SpawnError("E_FD_PASSING", `Connecting to "${path}" failed with errno ${errno}`, {
    details: { path, errno },
  });
}

/** Ends the writing side of a connected socket (the peer reads end-of-stream), keeping it readable. */
export function shutdownWrite(fd: number): void {
  libc().sym.shutdown(fd, LINUX_UNIX_SOCKET.SHUT_WR);
}

/**
 * Opens (creating, 0600, never through a symlink) `path` and takes an exclusive `flock` on it without
 * waiting. Returns the held descriptor (the lock lasts as long as it stays open, and dies with the
 * process), or null when another process holds the lock.
 */
export function tryLockFile(path: string): number | null {
  linuxOnly("A lock file");
  const lib = libc();
  const { O_RDWR, O_CREAT, O_NOFOLLOW, O_CLOEXEC, LOCK_EX, LOCK_NB, EWOULDBLOCK } = LINUX_UNIX_SOCKET;
  const fd = lib.sym.open(cString(path), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600);
  if (fd < 0) {
    throw new SpawnError("E_FD_PASSING", `Opening lock file "${path}" failed with errno ${lib.errno()}`, {
      details: { path },
    });
  }
  if (lib.sym.flock(fd, LOCK_EX | LOCK_NB) === 0) return fd;
  const errno = lib.errno();
  closeQuietly(fd);
  if (errno === EWOULDBLOCK) return null;
  throw new SpawnError("E_FD_PASSING", `flock("${path}") failed with errno ${errno}`, { details: { path } });
}
