/**
 * Bounded reads of regular files through the descriptor that was checked: a FIFO, a device, a
 * directory or a file over the cap is a typed error, never a hang or an unbounded allocation.
 *
 * @module
 */
import { FileError } from "../errors.ts";
import { AT_FDCWD, cPath, ERRNO, linux, O } from "./_linux.ts";
import { closeFd, fdInfo, fdProcPath, openBeneath, openNoSymlinks } from "./open.ts";

/** What a read is for, in error messages ("scenario", "golden", …), and its size cap. */
export interface ReadLimits {
  /** The largest accepted size in bytes. */
  readonly maxBytes: number;
  /** What the file is, for messages (e.g. `"policy file"`). Default `"file"`. */
  readonly what?: string;
}

/**
 * Reads the whole regular file open on `fd` (the descriptor stays open; the caller closes it). Throws
 * `E_FILE_TYPE` for anything but a regular file, `E_FILE_TOO_LARGE` over `maxBytes` (also when it grows
 * while being read), `E_FILE_READ` on an I/O error.
 */
export function readFd(fd: number, limits: ReadLimits, shown = `descriptor ${fd}`): Uint8Array {
  const what = limits.what ?? "file";
  const stat = fdInfo(fd);
  if (stat.kind !== "file") {
    throw new FileError("E_FILE_TYPE", `The ${what} "${shown}" is a ${stat.kind}, not a regular file`, {
      details: { path: shown, kind: stat.kind },
    });
  }
  if (stat.size > limits.maxBytes) throw tooLarge(what, shown, stat.size, limits.maxBytes);
  const { sym, errno } = linux();
  // Read through a fresh description of the very inode that was checked (`fd` may be an O_PATH handle:
  // then nothing but a regular file is ever opened for reading, so a device's open has no side effects).
  const readable = sym.openat(AT_FDCWD, cPath(fdProcPath(fd)), O.RDONLY | O.NONBLOCK | O.CLOEXEC | 0o400, 0);
  if (readable < 0) {
    const code = errno();
    throw new FileError("E_FILE_READ", `Could not open the ${what} "${shown}" (errno ${code})`, {
      details: { path: shown, errno: code },
    });
  }
  try {
    return readOpen(readable, stat.size, limits, what, shown);
  } finally {
    closeFd(readable);
  }
}

function readOpen(fd: number, size: number, limits: ReadLimits, what: string, shown: string): Uint8Array {
  const { sym, errno } = linux();
  const stat = { size };
  // One byte more than the cap tells "exactly at the cap" from "grew past it".
  const buffer = new Uint8Array(Math.min(limits.maxBytes, Math.max(stat.size, 4096)) + 1);
  let length = 0;
  for (;;) {
    if (length === buffer.length) throw tooLarge(what, shown, length, limits.maxBytes);
    const view = buffer.subarray(length);
    const n = Number(sym.read(fd, view, BigInt(view.length)));
    if (n === 0) break;
    if (n < 0) {
      const code = errno();
      if (code === ERRNO.EINTR) continue;
      throw new FileError("E_FILE_READ", `Could not read the ${what} "${shown}" (errno ${code})`, {
        details: { path: shown, errno: code },
      });
    }
    length += n;
    if (length > limits.maxBytes) throw tooLarge(what, shown, length, limits.maxBytes);
  }
  return buffer.slice(0, length);
}

function tooLarge(what: string, shown: string, size: number, max: number): FileError {
  return new FileError("E_FILE_TOO_LARGE", `The ${what} "${shown}" is larger than ${max} bytes`, {
    details: { path: shown, size, max },
  });
}

/**
 * Reads `relative` beneath the directory `dir` (a path the caller trusts, or an open directory
 * descriptor): no symlink, no `..`, no absolute path, regular files only, at most `maxBytes`. The file
 * is checked and read through one descriptor.
 */
export function readFileBeneath(dir: string | number, relative: string, limits: ReadLimits): Uint8Array {
  const dirFd = typeof dir === "number" ? dir : openDirectory(dir);
  try {
    const fd = openBeneath(dirFd, relative);
    try {
      return readFd(fd, limits, relative);
    } finally {
      closeFd(fd);
    }
  } finally {
    if (typeof dir !== "number") closeFd(dirFd);
  }
}

/**
 * Opens a directory the user named (on the command line, say): symlinks in its own path are the user's
 * choice and are followed; what lies beneath it is then resolved with {@link readFileBeneath} or
 * `openBeneath`. Returns an `O_PATH` descriptor. Throws `E_PATH_NOT_FOUND`, `E_FILE_TYPE`.
 */
export function openDirectory(path: string): number {
  const { sym, errno } = linux();
  const fd = sym.openat(AT_FDCWD, cPath(path), O.PATH | O.CLOEXEC, 0);
  if (fd < 0) {
    const code = errno();
    if (code === ERRNO.ENOENT || code === ERRNO.ENOTDIR) {
      throw new FileError("E_PATH_NOT_FOUND", `Directory "${path}" does not exist`, {
        details: { path, errno: code },
      });
    }
    throw new FileError("E_FILE_READ", `Could not open directory "${path}" (errno ${code})`, {
      details: { path, errno: code },
    });
  }
  const kind = fdInfo(fd).kind;
  if (kind !== "dir") {
    closeFd(fd);
    throw new FileError("E_FILE_TYPE", `"${path}" is a ${kind}, not a directory`, {
      details: { path, kind },
    });
  }
  return fd;
}

/**
 * Reads a file the user named: symlinks are followed unless `noFollow` (then none may appear in any
 * component of the absolute path). Opened non-blocking, so a FIFO or a device fails fast with
 * `E_FILE_TYPE` instead of hanging; capped at `maxBytes`.
 */
export function readRegularFile(
  path: string,
  limits: ReadLimits & { readonly noFollow?: boolean },
): Uint8Array {
  const { sym, errno } = linux();
  let fd: number;
  if (limits.noFollow === true) {
    fd = openNoSymlinks(path);
  } else {
    // A handle first: the type is checked before anything is opened for reading (see readFd).
    fd = sym.openat(AT_FDCWD, cPath(path), O.PATH | O.CLOEXEC, 0);
    if (fd < 0) {
      const code = errno();
      const what = limits.what ?? "file";
      if (code === ERRNO.ENOENT || code === ERRNO.ENOTDIR) {
        throw new FileError("E_PATH_NOT_FOUND", `The ${what} "${path}" does not exist`, {
          details: { path, errno: code },
        });
      }
      throw new FileError("E_FILE_READ", `Could not open the ${what} "${path}" (errno ${code})`, {
        details: { path, errno: code },
      });
    }
  }
  try {
    return readFd(fd, limits, path);
  } finally {
    closeFd(fd);
  }
}

/**
 * A readable, close-on-exec descriptor of the regular file `fd` (an `O_PATH` descriptor) holds, through its
 * magic link: the same inode, nothing looked up by name. Throws `E_FILE_TYPE` for anything but a regular
 * file, `E_FILE_READ` when it cannot be opened.
 */
export function reopenForReading(fd: number): number {
  const kind = fdInfo(fd).kind;
  if (kind !== "file") {
    throw new FileError("E_FILE_TYPE", `Descriptor ${fd} is a ${kind}, not a regular file`, {
      details: { kind },
    });
  }
  const { sym, errno } = linux();
  const readable = sym.openat(AT_FDCWD, cPath(fdProcPath(fd)), O.RDONLY | O.CLOEXEC, 0);
  if (readable < 0) {
    throw new FileError("E_FILE_READ", `Could not open descriptor ${fd} for reading (errno ${errno()})`, {
      details: { errno: errno() },
    });
  }
  return readable;
}
