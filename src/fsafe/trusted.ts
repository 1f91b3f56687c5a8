/**
 * Opening a path that may pass through symlinks only root could have made.
 *
 * A grant like `/bin/sh` or `/usr/bin/vim` passes through system symlinks (`/bin -> usr/bin`,
 * `vim -> /etc/alternatives/vim`). Those are trusted: root made them, in a system tree no policy can make
 * writable. A symlink anywhere else could have been planted by a sandboxed program (every write grant is
 * its territory, and a sandbox writes as its caller: as root, its links are root's), so it is refused. The walk is done by descriptor,
 * one `openat(O_PATH|O_NOFOLLOW)` per component, and the result is the descriptor of the final inode:
 * there is no second lookup by name for anyone to race with.
 *
 * @module
 */
import { FileError } from "../errors.ts";
import { cPath, ERRNO, linux, O } from "./_linux.ts";
import { closeFd, type FdInfo, fdInfo, openNoSymlinks } from "./open.ts";
import { systemTreeOf } from "./system_trees.ts";

/** At most this many symlinks are followed for one path (the kernel's own limit). */
export const MAX_LINK_HOPS = 40;

/** A path opened by {@link openTrusted}. */
export interface TrustedPath {
  /** An `O_PATH`, close-on-exec descriptor of the final inode. */
  readonly fd: number;
  /** The path with every trusted link resolved (absolute, normalized). */
  readonly path: string;
  /** The symlinks that were followed, in order (empty when the path had none). */
  readonly followed: readonly string[];
}

/**
 * True when the link at `path` lies in a system tree (which no policy can make writable, so no sandbox,
 * root's included, can have written there), root owns it and its directory, and nobody else can write
 * that directory.
 */
export function rootOnlyLink(directory: FdInfo, link: FdInfo, path: string): boolean {
  return link.uid === 0 && directory.uid === 0 && (directory.mode & 0o022) === 0 &&
    systemTreeOf(path) !== undefined;
}

/**
 * Opens the absolute, normalized `path`, following a symlink only when `trust(directory, link)` holds
 * (default {@link rootOnlyLink}). Throws `E_PATH_SYMLINK` naming the first untrusted link,
 * `E_PATH_NOT_FOUND`, `E_PATH_ESCAPE` (not absolute or normalized), `E_FILE_READ`.
 */
export function openTrusted(
  path: string,
  trust: (directory: FdInfo, link: FdInfo, path: string) => boolean = rootOnlyLink,
): TrustedPath {
  // Most grants have no link at all: one openat2 call settles them.
  try {
    return { fd: openNoSymlinks(path), path, followed: [] };
  } catch (error: unknown) {
    if (!(error instanceof FileError) || error.code !== "E_PATH_SYMLINK") throw error;
  }
  return walk(path, trust);
}

function walk(path: string, trust: (directory: FdInfo, link: FdInfo, path: string) => boolean): TrustedPath {
  const { sym, errno, flags } = linux();
  const root = sym.openat(-100, cPath("/"), O.PATH | O.CLOEXEC, 0);
  if (root < 0) throw new FileError("E_FILE_READ", `Could not open "/" (errno ${errno()})`);
  const dirs: number[] = [root];
  const names: string[] = [];
  const followed: string[] = [];
  const todo = path.split("/");
  try {
    while (todo.length > 0) {
      const part = todo.shift()!;
      if (part === "" || part === ".") continue;
      if (part === "..") {
        // Only a trusted link's target can contain "..": the caller's path is normalized.
        if (names.length > 0) {
          closeFd(dirs.pop()!);
          names.pop();
        }
        continue;
      }
      const here = dirs.at(-1)!;
      const next = sym.openat(here, cPath(part), O.PATH | O.CLOEXEC | flags.O_NOFOLLOW, 0);
      const shown = `/${[...names, part].join("/")}`;
      if (next < 0) throw notFound(errno(), shown, path);
      const info = fdInfo(next);
      if (info.kind !== "symlink") {
        if (todo.some((p) => p !== "" && p !== ".") && info.kind !== "dir") {
          closeFd(next);
          throw notFound(ERRNO.ENOTDIR, shown, path);
        }
        dirs.push(next);
        names.push(part);
        continue;
      }
      try {
        const directory = fdInfo(here);
        if (!trust(directory, info, shown)) {
          const why = info.uid !== 0
            ? `owned by uid ${info.uid}`
            : systemTreeOf(shown) === undefined
            ? "outside the system trees, where a sandbox may have written it"
            : `in a directory uid ${directory.uid} owns with mode ${(directory.mode & 0o7777).toString(8)}`;
          throw new FileError(
            "E_PATH_SYMLINK",
            `Path "${path}" passes through the symlink "${shown}", which a sandboxed program could have made (${why})`,
            { details: { path, link: shown, owner: info.uid, directory_owner: directory.uid } },
          );
        }
        if (followed.length >= MAX_LINK_HOPS) {
          throw new FileError("E_PATH_SYMLINK", `Path "${path}" has more than ${MAX_LINK_HOPS} symlinks`, {
            details: { path },
          });
        }
        const target = readLink(next, shown);
        followed.push(shown);
        if (target.startsWith("/")) {
          while (dirs.length > 1) closeFd(dirs.pop()!);
          names.length = 0;
        }
        todo.unshift(...target.split("/"));
      } finally {
        closeFd(next);
      }
    }
    const fd = dirs.pop()!;
    return { fd, path: `/${names.join("/")}`, followed };
  } finally {
    for (const fd of dirs) closeFd(fd);
  }
}

function readLink(fd: number, shown: string): string {
  const { sym, errno } = linux();
  const buffer = new Uint8Array(4097);
  const length = Number(sym.readlinkat(fd, new Uint8Array(1), buffer, BigInt(buffer.length)));
  if (length < 0 || length >= buffer.length) {
    throw new FileError("E_FILE_READ", `Could not read the symlink "${shown}" (errno ${errno()})`, {
      details: { path: shown },
    });
  }
  return new TextDecoder().decode(buffer.subarray(0, length));
}

function notFound(code: number, shown: string, path: string): FileError {
  if (code === ERRNO.ENOENT || code === ERRNO.ENOTDIR) {
    return new FileError("E_PATH_NOT_FOUND", `Path "${path}" does not exist ("${shown}" is missing)`, {
      details: { path, missing: shown },
    });
  }
  return new FileError("E_FILE_READ", `Could not open "${shown}" (errno ${code})`, {
    details: { path, errno: code },
  });
}
