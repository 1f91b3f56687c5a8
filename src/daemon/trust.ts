/**
 * Trusting only this user's own daemon (and a daemon only its own keeper). Without `XDG_RUNTIME_DIR` the
 * socket is under `/tmp`, where any local user may create `/tmp/specter-UID/` first: a client that
 * connected there would hand secrets (`--env`), keystrokes and the agent's tool calls to that user, and
 * print what it sends on the victim's terminal.
 *
 * So before a byte is sent: the socket's directory must be a real directory of this user's that nobody
 * else may enter (no group or other bits), the socket file a socket of this user's, both checked by
 * descriptor (`O_PATH|O_NOFOLLOW`, then `statx` on the descriptor: no name is looked up twice), the
 * connection made through the checked inode itself (`/proc/self/fd/N`), and the listener's kernel
 * credentials (`SO_PEERCRED`, recorded when it called `listen()`) must name this user. Anything else is
 * `E_DAEMON_UNTRUSTED`, whose message says what is wrong and how to fix it.
 *
 * @module
 */
import { basename, dirname } from "node:path";
import { DaemonError, SpecterError } from "../errors.ts";
import { closeFd, type FdInfo, fdInfo, fdProcPath, openBeneath, openNoFollow, readFd } from "../fsafe/mod.ts";
import { closeQuietly, connectUnix, peerCredentials } from "../pty/mod.ts";

/** What is wrong with a place: the kind of problem (a stable word for machines). */
export type TrustProblem = "owner" | "mode" | "symlink" | "type" | "peer";

/** The mode as `0755`. */
function octal(mode: number): string {
  return `0${(mode & 0o7777).toString(8).padStart(3, "0")}`;
}

function untrusted(
  message: string,
  problem: TrustProblem,
  details: Record<string, string | number>,
): DaemonError {
  return new DaemonError("E_DAEMON_UNTRUSTED", message, {
    details: { problem, expected_uid: Deno.uid() ?? -1, ...details },
  });
}

/** Which of the daemon's places a directory is: its socket's, its state, or either (for the daemon). */
export type Place = "socket" | "state" | "any";

/** How to get a place of one's own instead of `dir`. */
function ownPlace(dir: string, place: Place): string {
  const socket =
    `set XDG_RUNTIME_DIR to a private directory of yours (e.g. /run/user/${Deno.uid()}) or pass ` +
    "--socket with a path in a directory of yours of mode 0700";
  const state = "pass --state-dir (or set XDG_STATE_HOME) naming a directory of yours of mode 0700";
  const way = place === "socket" ? socket : place === "state" ? state : `${socket}; for the state, ${state}`;
  return `${way}; "${dir}" itself can be removed by its owner or root`;
}

/** How to reach a daemon (or keeper: its socket is in the state) of one's own instead of this one. */
function ownListener(place: Place): string {
  return place === "state"
    ? "stop it, or give the daemon a state directory of your own (--state-dir)"
    : "stop it, or use a socket of your own (--socket, XDG_RUNTIME_DIR)";
}

/**
 * Null when `info` (of `dir`, opened without following it) is a directory of this user's with no group or
 * other permission bits; otherwise the refusal, saying what is wrong and how to fix it.
 */
export function privateDirProblem(
  dir: string,
  info: FdInfo,
  what = "directory",
  place: Place = "any",
): DaemonError | null {
  const uid = Deno.uid();
  if (info.kind === "symlink") {
    return untrusted(
      `The ${what} "${dir}" is a symlink, not a directory: whoever controls its target would receive ` +
        `what is sent; remove the link (rm "${dir}") or ${ownPlace(dir, place)}`,
      "symlink",
      { path: dir },
    );
  }
  if (info.kind !== "dir") {
    return untrusted(
      `The ${what} "${dir}" is a ${info.kind}, not a directory; remove it or ${ownPlace(dir, place)}`,
      "type",
      { path: dir, kind: info.kind },
    );
  }
  if (info.uid !== uid) {
    return untrusted(
      `The ${what} "${dir}" belongs to uid ${info.uid}, not to this user (uid ${uid}): another user may ` +
        `have made it to receive what is sent; ${ownPlace(dir, place)}`,
      "owner",
      { path: dir, uid: info.uid },
    );
  }
  if ((info.mode & 0o077) !== 0) {
    return untrusted(
      `The ${what} "${dir}" has mode ${octal(info.mode)}: other users may enter it or replace what is in ` +
        `it (it must be 0700); if nothing in it was replaced, chmod 700 "${dir}", or ${ownPlace(dir, place)}`,
      "mode",
      { path: dir, mode: octal(info.mode) },
    );
  }
  return null;
}

/**
 * Opens `dir` (`O_PATH`, the last component not followed) and checks it with {@link privateDirProblem}.
 * Returns the descriptor (the caller closes it), or null when `dir` does not exist. Throws
 * `E_DAEMON_UNTRUSTED`.
 */
export function openPrivateDir(dir: string, what = "directory", place: Place = "any"): number | null {
  let fd: number;
  try {
    fd = openNoFollow(dir);
  } catch (error: unknown) {
    if (error instanceof SpecterError && error.code === "E_PATH_NOT_FOUND") return null;
    throw error;
  }
  const problem = privateDirProblem(dir, fdInfo(fd), what, place);
  if (problem !== null) {
    closeFd(fd);
    throw problem;
  }
  return fd;
}

function socketProblem(path: string, info: FdInfo, what: string): DaemonError | null {
  const uid = Deno.uid();
  const fix = `remove it (rm "${path}") and find out who could write to "${dirname(path)}"`;
  if (info.kind !== "socket") {
    return untrusted(`The ${what} "${path}" is a ${info.kind}, not a socket; ${fix}`, "type", {
      path,
      kind: info.kind,
    });
  }
  if (info.uid !== uid) {
    return untrusted(
      `The ${what} "${path}" belongs to uid ${info.uid}, not to this user (uid ${uid}); ${fix}`,
      "owner",
      { path, uid: info.uid },
    );
  }
  return null;
}

/**
 * Connects to the unix socket `path` only if it is this user's own: its directory private (see
 * {@link privateDirProblem}), the socket file a socket of this user's and not a symlink, and the process
 * that listens on it running as this user (`SO_PEERCRED`). Nothing is written. Returns the connected,
 * non-blocking, close-on-exec descriptor, or null when nobody listens there (no directory, no socket, or a
 * stale one). Throws `E_DAEMON_UNTRUSTED`; `E_FD_PASSING` when connecting fails otherwise (`errno` in
 * its details: 11 when the listener's backlog is full).
 */
export function connectOwnSocket(
  path: string,
  type: "stream" | "seqpacket",
  { what = "daemon's socket", place = "socket" }: { what?: string; place?: Place } = {},
): number | null {
  const dirFd = openPrivateDir(dirname(path), `directory of the ${what}`, place);
  if (dirFd === null) return null;
  let socketFd = -1;
  try {
    try {
      socketFd = openBeneath(dirFd, basename(path));
    } catch (error: unknown) {
      if (!(error instanceof SpecterError)) throw error;
      if (error.code === "E_PATH_NOT_FOUND") return null;
      if (error.code === "E_PATH_SYMLINK") {
        throw untrusted(
          `The ${what} "${path}" is a symlink; remove it (rm "${path}") and find out who could write to "${
            dirname(path)
          }"`,
          "symlink",
          { path },
        );
      }
      throw error;
    }
    const problem = socketProblem(path, fdInfo(socketFd), what);
    if (problem !== null) throw problem;
    // Through the inode just checked: a name looked up again could have been replaced meanwhile.
    const fd = connectUnix(fdProcPath(socketFd), type);
    if (fd === null) return null;
    checkPeer(fd, path, what, place);
    return fd;
  } finally {
    closeFd(dirFd);
    if (socketFd >= 0) closeFd(socketFd);
  }
}

/**
 * Checks that the process at the other end of the connected socket `fd` runs as this user (its kernel
 * credentials); otherwise closes `fd` and throws `E_DAEMON_UNTRUSTED`.
 */
export function checkPeer(fd: number, path: string, what = "daemon's socket", place: Place = "socket"): void {
  let peer;
  try {
    peer = peerCredentials(fd);
  } catch (error: unknown) {
    closeQuietly(fd);
    throw error;
  }
  if (peer.uid === Deno.uid()) return;
  closeQuietly(fd);
  throw untrusted(
    `The process listening on the ${what} "${path}" (pid ${peer.pid}) runs as uid ${peer.uid}, not as this ` +
      `user (uid ${Deno.uid()}); ${ownListener(place)}`,
    "peer",
    { path, uid: peer.uid, pid: peer.pid },
  );
}

/**
 * Reads `name` in the state directory `dir` only if both are this user's own: the directory private (see
 * {@link privateDirProblem}), the file a regular file of this user's that no one else may read or write,
 * not a symlink, at most `maxBytes`. Returns null when the directory or the file does not exist. Throws
 * `E_DAEMON_UNTRUSTED`, or the file's own errors (`E_FILE_TOO_LARGE`, `E_FILE_READ`).
 */
export function readOwnFile(dir: string, name: string, maxBytes: number, what: string): Uint8Array | null {
  const dirFd = openPrivateDir(dir, "state directory", "state");
  if (dirFd === null) return null;
  const path = `${dir}/${name}`;
  let fd = -1;
  try {
    try {
      fd = openBeneath(dirFd, name);
    } catch (error: unknown) {
      if (error instanceof SpecterError && error.code === "E_PATH_NOT_FOUND") return null;
      if (error instanceof SpecterError && error.code === "E_PATH_SYMLINK") {
        throw untrusted(`The ${what} "${path}" is a symlink; remove it (rm "${path}")`, "symlink", { path });
      }
      throw error;
    }
    const info = fdInfo(fd);
    const uid = Deno.uid();
    if (info.kind !== "file") {
      throw untrusted(`The ${what} "${path}" is a ${info.kind}, not a regular file; remove it`, "type", {
        path,
        kind: info.kind,
      });
    }
    if (info.uid !== uid) {
      throw untrusted(
        `The ${what} "${path}" belongs to uid ${info.uid}, not to this user (uid ${uid}); remove it ` +
          `(rm "${path}") and find out who could write to "${dir}"`,
        "owner",
        { path, uid: info.uid },
      );
    }
    if ((info.mode & 0o077) !== 0) {
      throw untrusted(
        `The ${what} "${path}" has mode ${octal(info.mode)} (it must be 0600: others could read or ` +
          `change it); remove it and start the daemon again`,
        "mode",
        { path, mode: octal(info.mode) },
      );
    }
    return readFd(fd, { maxBytes, what }, path);
  } finally {
    closeFd(dirFd);
    if (fd >= 0) closeFd(fd);
  }
}

/**
 * Null when process `pid` runs as this user (every uid on the `Uid:` line of `/proc/PID/status`: real,
 * effective, saved, filesystem); otherwise the refusal, naming the file that named the process. A
 * process that is gone is the caller's business (`Deno.errors.NotFound` is thrown).
 */
export function ownProcessProblem(pid: number, namedIn: string): DaemonError | null {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const line = /^Uid:\s+(\d+(?:\s+\d+)*)\s*$/m.exec(status)?.[1];
  // No readable line is refused like a foreign one: nothing says whose it is.
  const uids = line === undefined ? [-1] : line.split(/\s+/).map(Number);
  const foreign = uids.find((uid) => uid !== Deno.uid());
  if (foreign === undefined) return null;
  return untrusted(
    `The daemon named in "${namedIn}" (pid ${pid}) runs as uid ${foreign}, not as this user ` +
      `(uid ${Deno.uid()}); remove "${namedIn}" and start the daemon again`,
    "peer",
    { path: namedIn, uid: foreign, pid },
  );
}
