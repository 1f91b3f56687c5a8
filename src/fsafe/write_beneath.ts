/**
 * Writing where a sandboxed program may have written before: a recording, an audit log, a bundle, a
 * golden. A program that could write a directory in an earlier run can leave a symlink there (dangling or
 * not, at the file or at any directory on the way); a later run that opened the path by name would then
 * create, truncate or append to whatever the link names, as the caller (root's `~/.bashrc`, say).
 *
 * So the directory is opened by descriptor, following only links no sandbox can have made ({@link
 * writerTrust}); missing directories are made one component at a time beneath it (`mkdirat`, then opened
 * without following a link); and the file is opened beneath that descriptor: an existing one only when it
 * is a regular file (a symlink is `E_PATH_SYMLINK`, a FIFO, device or directory `E_FILE_TYPE`), reopened
 * through the very inode that was checked, a missing one created with `O_EXCL`, which never follows a
 * link planted meanwhile.
 *
 * @module
 */
import { resolve } from "node:path";
import { FileError } from "../errors.ts";
import { cPath, ERRNO, linux } from "./_linux.ts";
import { closeFd, type FdInfo, fdInfo, fdProcPath, openBeneath } from "./open.ts";
import { openTrusted, rootOnlyLink } from "./trusted.ts";
import { isWithin } from "./within.ts";

/**
 * The links a writer follows: root's in the system trees ({@link rootOnlyLink}), and a link at the
 * caller's home directory or one of its ancestors (`/home -> var/home`): no policy may grant writing the
 * home directory or anything that contains it (`E_POLICY_BROAD_ROOT`), so no sandbox can have put a link
 * there. Beneath the home directory every link is refused: that is where write grants are.
 */
export function writerTrust(
  home: string | undefined = Deno.env.get("HOME"),
): (directory: FdInfo, link: FdInfo, path: string) => boolean {
  const base = home !== undefined && home.startsWith("/") && home !== "/" ? resolve(home) : null;
  return (directory, link, path) =>
    rootOnlyLink(directory, link, path) || (base !== null && isWithin(base, path));
}

/** How {@link openWriteDir} opens a directory. */
export interface WriteDirOptions {
  /** Make missing directories (each one `mode`, one component at a time). Default false. */
  readonly create?: boolean;
  /** Permission bits of directories it makes. Default 0700. */
  readonly mode?: number;
}

/**
 * Opens the directory `path` (relative to the current directory, or absolute) to write beneath: an
 * `O_PATH` descriptor the caller closes. Only {@link writerTrust} links are followed. Throws
 * `E_PATH_SYMLINK` (naming the link), `E_PATH_NOT_FOUND`, `E_FILE_TYPE` (not a directory),
 * `E_FILE_WRITE` (a directory could not be made), `E_FILE_READ`.
 */
export function openWriteDir(path: string, options: WriteDirOptions = {}): number {
  const absolute = resolve(path);
  const trust = writerTrust();
  try {
    return directoryOnly(openTrusted(absolute, trust).fd, absolute);
  } catch (error: unknown) {
    if (options.create !== true || !(error instanceof FileError) || error.code !== "E_PATH_NOT_FOUND") {
      throw error;
    }
  }
  // The deepest directory that exists, then the rest made beneath it.
  const parts = absolute.split("/").filter((part) => part !== "");
  for (let depth = parts.length - 1; depth >= 0; depth--) {
    let base: number;
    try {
      base = directoryOnly(openTrusted(`/${parts.slice(0, depth).join("/")}`, trust).fd, absolute);
    } catch (error: unknown) {
      if (error instanceof FileError && error.code === "E_PATH_NOT_FOUND") continue;
      throw error;
    }
    try {
      return makeDirsBeneath(base, parts.slice(depth).join("/"), options.mode);
    } finally {
      closeFd(base);
    }
  }
  throw new FileError("E_PATH_NOT_FOUND", `Directory "${absolute}" cannot be reached`, { details: { path } });
}

/**
 * Makes each missing directory of `relative` beneath `dirFd` (`mode`, default 0700) and opens the last:
 * no component may be a symlink or anything but a directory, whoever made it. Returns a new `O_PATH`
 * descriptor. Throws `E_PATH_SYMLINK`, `E_PATH_ESCAPE` (`..`, absolute), `E_FILE_TYPE`, `E_FILE_WRITE`.
 */
export function makeDirsBeneath(dirFd: number, relative: string, mode = 0o700): number {
  const { sym, errno } = linux();
  let current = -1;
  try {
    for (const part of relative.split("/")) {
      const at = current < 0 ? dirFd : current;
      if (part !== "" && part !== "." && part !== ".." && sym.mkdirat(at, cPath(part), mode) !== 0) {
        const code = errno();
        if (code !== ERRNO.EEXIST) {
          throw new FileError("E_FILE_WRITE", `Could not make the directory "${relative}" (errno ${code})`, {
            details: { path: relative, errno: code, reason: "io" },
          });
        }
      }
      // Made by us or found: opened without following a link either way (checked names, no `..`).
      const next = directoryOnly(openBeneath(at, part), relative);
      closeFd(current);
      current = next;
    }
    const done = current;
    current = -1;
    return done;
  } finally {
    closeFd(current);
  }
}

function directoryOnly(fd: number, shown: string): number {
  const kind = fdInfo(fd).kind;
  if (kind === "dir") return fd;
  closeFd(fd);
  throw new FileError("E_FILE_TYPE", `"${shown}" is not a directory (a ${kind} is in the way)`, {
    details: { path: shown, kind },
  });
}

/** How {@link openFileBeneath} opens a file. */
export interface WriteFileOptions {
  /** `truncate`: write from the start (an existing file is emptied); `append`: add at its end. */
  readonly how: "truncate" | "append";
  /** Permission bits of a file it creates (the umask applies). */
  readonly mode: number;
}

/** A file opened by {@link openFileBeneath}. */
export interface FileBeneath {
  /** The file, open for writing. */
  readonly file: Deno.FsFile;
  /** An `O_PATH` descriptor of the file when it existed already (to read it through), else -1; the caller closes it. */
  readonly existing: number;
}

/** Attempts at an entry that keeps being swapped between the look and the create: someone is racing. */
const MAX_ATTEMPTS = 4;

/**
 * Opens the file `name` (one component) in the directory `dirFd` for writing. An existing entry must be
 * a regular file with no other hard link (another name of it could lie in a sandbox's write grant) and is
 * reopened through the descriptor that was checked; a missing one is created with `O_EXCL`. Throws
 * `E_PATH_SYMLINK` (a symlink, dangling or not), `E_FILE_TYPE` (a FIFO, device, socket, directory, or a file
 * with other links), `E_PATH_ESCAPE` (not one component), `E_FILE_WRITE`.
 */
export function openFileBeneath(dirFd: number, name: string, options: WriteFileOptions): FileBeneath {
  if (name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\0")) {
    throw new FileError("E_PATH_ESCAPE", `File name "${name}" must be one path component`, {
      details: { path: name },
    });
  }
  const append = options.how === "append";
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    let handle: number;
    try {
      handle = openBeneath(dirFd, name);
    } catch (error: unknown) {
      if (!(error instanceof FileError) || error.code !== "E_PATH_NOT_FOUND") throw error;
      try {
        // O_CREAT|O_EXCL: a name that appeared meanwhile (a link, say) fails here, never followed.
        const file = Deno.openSync(`${fdProcPath(dirFd)}/${name}`, {
          write: true,
          append,
          createNew: true,
          mode: options.mode,
        });
        return { file, existing: -1 };
      } catch (created: unknown) {
        if (created instanceof Deno.errors.AlreadyExists) continue;
        throw cannotWrite(name, created);
      }
    }
    try {
      const info = fdInfo(handle);
      if (info.kind !== "file") {
        throw new FileError("E_FILE_TYPE", `"${name}" is a ${info.kind}, not a regular file`, {
          details: { path: name, kind: info.kind },
        });
      }
      if (info.links > 1) {
        throw new FileError(
          "E_FILE_TYPE",
          `"${name}" has ${info.links} hard links: another name of it could be anywhere on its filesystem`,
          { details: { path: name, kind: info.kind, links: info.links } },
        );
      }
      // The inode just checked, through its magic link: no second lookup by name.
      const file = Deno.openSync(fdProcPath(handle), { write: true, append, truncate: !append });
      const existing = handle;
      handle = -1;
      return { file, existing };
    } catch (error: unknown) {
      if (error instanceof FileError) throw error;
      throw cannotWrite(name, error);
    } finally {
      closeFd(handle);
    }
  }
  throw new FileError("E_FILE_WRITE", `"${name}" kept changing while it was opened: someone is racing`, {
    details: { path: name, reason: "race" },
  });
}

function cannotWrite(name: string, error: unknown): FileError {
  return new FileError("E_FILE_WRITE", `Could not open "${name}" for writing: ${(error as Error).message}`, {
    cause: error,
    details: { path: name, reason: "io" },
  });
}
