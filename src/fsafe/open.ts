/**
 * Opening paths by descriptor without following symlinks a sandboxed program could have planted.
 *
 * Everything is resolved by the kernel in one `openat2` call with `RESOLVE_NO_SYMLINKS` (no component
 * may be a symlink) and, for paths relative to a directory, `RESOLVE_BENEATH` (no component may leave
 * it). What the caller then checks (`fdInfo`), reads (`readFd`) or hands to bwrap (`--bind-fd`) is the
 * very inode that was resolved: there is no second lookup by name to race with.
 *
 * Kernels without `openat2` (before 5.6) fall back to a walk of `openat(O_PATH|O_NOFOLLOW)` one
 * component at a time, which gives the same guarantee with more system calls.
 *
 * @module
 */
import { FileError } from "../errors.ts";
import { AT_FDCWD, cPath, ERRNO, linux, O, type RawStat, RESOLVE, statFd, SYS_OPENAT2 } from "./_linux.ts";

/** What kind of inode a descriptor refers to. */
export type FileKind = "file" | "dir" | "symlink" | "fifo" | "socket" | "char" | "block" | "unknown";

/** Facts about the inode behind a descriptor. */
export interface FdInfo {
  /** The inode's type. */
  readonly kind: FileKind;
  /** Size in bytes (regular files). */
  readonly size: number;
  /** Device and inode, `major:minor:ino`: equal for two descriptors of the same file. */
  readonly identity: string;
  /** Permission bits and type (`st_mode`). */
  readonly mode: number;
  /** Owner uid. */
  readonly uid: number;
  /** Hard links to the inode (another name of it may lie anywhere on its filesystem). */
  readonly links: number;
}

/** How to open. */
export interface OpenOptions {
  /**
   * `handle`: an `O_PATH` descriptor (for `fdInfo`, bind mounts and as a directory to resolve beneath;
   * opening it never blocks and never has side effects). `read`: readable, opened non-blocking so a FIFO
   * or device never hangs the open. Default `handle`.
   */
  readonly mode?: "handle" | "read";
}

const KINDS: Readonly<Record<number, FileKind>> = {
  0o100000: "file",
  0o040000: "dir",
  0o120000: "symlink",
  0o010000: "fifo",
  0o140000: "socket",
  0o020000: "char",
  0o060000: "block",
};

function info(raw: RawStat): FdInfo {
  return {
    kind: KINDS[raw.mode & 0o170000] ?? "unknown",
    size: raw.size,
    identity: `${raw.devMajor}:${raw.devMinor}:${raw.ino}`,
    mode: raw.mode,
    uid: raw.uid,
    links: raw.nlink,
  };
}

/** The inode behind `fd` (throws `E_FILE_READ` when `statx` fails). */
export function fdInfo(fd: number): FdInfo {
  const raw = statFd(fd);
  if (typeof raw === "number") {
    throw new FileError("E_FILE_READ", `Could not inspect descriptor ${fd} (errno ${raw})`, {
      details: { errno: raw },
    });
  }
  return info(raw);
}

/** Closes `fd`; errors are ignored (the descriptor is gone either way). */
export function closeFd(fd: number): void {
  if (fd >= 0) linux().sym.close(fd);
}

/** `/proc/self/fd/N`: a name for an open descriptor, for programs that only take names. */
export function fdProcPath(fd: number): string {
  return `/proc/self/fd/${fd}`;
}

/**
 * Opens `/proc/<pid>/root`, the root directory another process sees (a magic link, followed on purpose:
 * it is how a sandbox's own view is inspected from outside). Resolve beneath it with {@link openBeneath}.
 * Throws `E_PATH_NOT_FOUND` when the process is gone, `E_FILE_READ` otherwise.
 */
export function openProcessRoot(pid: number): number {
  const { sym, errno, flags } = linux();
  const fd = sym.openat(AT_FDCWD, cPath(`/proc/${pid}/root`), O.PATH | O.CLOEXEC | flags.O_DIRECTORY, 0);
  if (fd < 0) throw failure(errno(), `/proc/${pid}/root`);
  return fd;
}

/**
 * Opens `path` as `lstat` sees it: symlinks in the leading components are followed, the last component
 * is not (a symlink there is opened as itself: {@link fdInfo} says `symlink`). An `O_PATH` descriptor, so
 * what is then checked (owner, mode, type) is the very inode that was opened, never looked up by name
 * again. Throws `E_PATH_NOT_FOUND` (no such path), `E_PATH_ESCAPE` (a NUL byte), `E_FILE_READ`.
 */
export function openNoFollow(path: string): number {
  if (path.includes("\0")) {
    throw new FileError("E_PATH_ESCAPE", `Path "${clip(path)}" holds a NUL byte`, {
      details: { path: clip(path) },
    });
  }
  const { sym, errno, flags } = linux();
  const fd = sym.openat(AT_FDCWD, cPath(path), O.PATH | O.CLOEXEC | flags.O_NOFOLLOW, 0);
  if (fd < 0) throw failure(errno(), path);
  return fd;
}

/**
 * Opens the absolute `path` with no symlink in any component (not even `/bin` on a merged-usr host:
 * callers that accept trusted links resolve them first, on purpose). Returns a close-on-exec descriptor.
 * Throws `E_PATH_ESCAPE` (not absolute or not normalized), `E_PATH_SYMLINK`, `E_PATH_NOT_FOUND`,
 * `E_FILE_READ`.
 */
export function openNoSymlinks(path: string, options: OpenOptions = {}): number {
  if (!path.startsWith("/") || !normalized(path.slice(1), true)) {
    throw new FileError("E_PATH_ESCAPE", `Path "${path}" is not absolute and normalized`, {
      details: { path },
    });
  }
  return open(
    AT_FDCWD,
    path === "/" ? "/" : path,
    RESOLVE.NO_SYMLINKS | RESOLVE.NO_MAGICLINKS,
    options,
    path,
  );
}

/**
 * Opens `relative` beneath the directory `dirFd` (from {@link openNoSymlinks} or an earlier
 * `openBeneath`): no component may be a symlink, `..` or absolute. Throws like {@link openNoSymlinks}.
 */
export function openBeneath(dirFd: number, relative: string, options: OpenOptions = {}): number {
  if (relative === "" || relative.startsWith("/") || !normalized(relative, false)) {
    throw new FileError(
      "E_PATH_ESCAPE",
      `Path "${clip(relative)}" must be relative, without "..", and stay beneath its directory`,
      { details: { path: clip(relative) } },
    );
  }
  return open(
    dirFd,
    relative,
    RESOLVE.BENEATH | RESOLVE.NO_SYMLINKS | RESOLVE.NO_MAGICLINKS,
    options,
    relative,
  );
}

/** True when no component is empty, `.` or `..` (an empty path is the root itself when allowed). */
function normalized(path: string, rootAllowed: boolean): boolean {
  if (path === "") return rootAllowed;
  if (path.includes("\0")) return false;
  return path.split("/").every((part) => part !== "" && part !== "." && part !== "..");
}

function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function flagsFor(options: OpenOptions): number {
  // O_NOCTTY (0o400 on both architectures): opening a terminal by name must never make it ours.
  return options.mode === "read" ? O.RDONLY | O.NONBLOCK | O.CLOEXEC | 0o400 : O.PATH | O.CLOEXEC;
}

let openat2Missing = false;

/** Tests only: resolve with the pre-5.6 component walk (`true`) or `openat2` again (`false`). */
export function forceComponentWalk(on: boolean): void {
  openat2Missing = on;
}

function open(dirFd: number, path: string, resolve: number, options: OpenOptions, shown: string): number {
  const { sym, errno } = linux();
  const flags = flagsFor(options);
  if (!openat2Missing) {
    const how = new BigUint64Array([BigInt(flags), 0n, BigInt(resolve)]);
    const bytes = new Uint8Array(how.buffer);
    for (;;) {
      const fd = Number(sym.syscall_openat2(BigInt(SYS_OPENAT2), BigInt(dirFd), cPath(path), bytes, 24n));
      if (fd >= 0) return fd;
      const code = errno();
      if (code === ERRNO.EINTR || code === ERRNO.EAGAIN) continue;
      if (code === ERRNO.ENOSYS) {
        openat2Missing = true;
        break;
      }
      throw failure(code, shown);
    }
  }
  return walk(dirFd, path, flags, shown);
}

/** The pre-5.6 fallback: one `openat(O_PATH|O_NOFOLLOW)` per component, refusing links. */
function walk(dirFd: number, path: string, flags: number, shown: string): number {
  const { sym, errno, flags: table } = linux();
  const parts = path === "/" ? [] : path.replace(/^\//, "").split("/");
  let current = sym.openat(dirFd, cPath(path.startsWith("/") ? "/" : "."), O.PATH | O.CLOEXEC, 0);
  if (current < 0) throw failure(errno(), shown);
  try {
    for (const part of parts) {
      const next = sym.openat(current, cPath(part), O.PATH | O.CLOEXEC | table.O_NOFOLLOW, 0);
      if (next < 0) throw failure(errno(), shown);
      closeFd(current);
      current = next;
      if (fdInfo(current).kind === "symlink") throw failure(ERRNO.ELOOP, shown);
    }
    if ((flags & O.PATH) !== 0) {
      const done = current;
      current = -1;
      return done;
    }
    const fd = sym.openat(AT_FDCWD, cPath(fdProcPath(current)), flags, 0);
    if (fd < 0) throw failure(errno(), shown);
    return fd;
  } finally {
    closeFd(current);
  }
}

function failure(code: number, path: string): FileError {
  const details = { path: clip(path), errno: code };
  switch (code) {
    case ERRNO.ELOOP:
      return new FileError("E_PATH_SYMLINK", `Path "${clip(path)}" is or passes through a symlink`, {
        details,
      });
    case ERRNO.EXDEV:
      return new FileError(
        "E_PATH_ESCAPE",
        `Path "${clip(path)}" leaves the directory it must stay beneath`,
        {
          details,
        },
      );
    case ERRNO.ENOENT:
    case ERRNO.ENOTDIR:
      return new FileError("E_PATH_NOT_FOUND", `Path "${clip(path)}" does not exist`, { details });
    case ERRNO.ENXIO:
      // O_NONBLOCK open of a FIFO for writing with no reader, or a socket: not a file either way.
      return new FileError("E_FILE_TYPE", `Path "${clip(path)}" is not a regular file`, { details });
    default:
      return new FileError("E_FILE_READ", `Could not open "${clip(path)}" (errno ${code})`, { details });
  }
}
