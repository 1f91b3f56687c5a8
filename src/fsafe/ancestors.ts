/**
 * Where a descriptor sits in the directory tree, learned from the descriptor itself: its ancestors by
 * identity (`openat(fd, "..")` step by step, never a name), its mount, and its path within its
 * filesystem (`/proc/self/fdinfo` `mnt_id` and `/proc/self/mountinfo`'s root field), so that a path
 * reached through a symlink or a bind mount (an alias) is still recognized as the same place.
 *
 * @module
 */
import { FileError } from "../errors.ts";
import { AT_FDCWD, cPath, linux, O } from "./_linux.ts";
import { closeFd, fdInfo, fdProcPath } from "./open.ts";

/** More levels than any real tree has: a loop (there can be none with `..`) would still end. */
export const MAX_ANCESTORS = 4096;

/** A second `O_PATH` descriptor of the inode behind `fd` (close-on-exec; throws `E_FILE_READ`). */
export function reopenFd(fd: number): number {
  const { sym, errno } = linux();
  // The magic link is the descriptor's own inode: nothing is looked up by name.
  const copy = sym.openat(AT_FDCWD, cPath(fdProcPath(fd)), O.PATH | O.CLOEXEC, 0);
  if (copy < 0) {
    throw new FileError("E_FILE_READ", `Could not reopen descriptor ${fd} (errno ${errno()})`, {
      details: { errno: errno() },
    });
  }
  return copy;
}

/**
 * The identities (`major:minor:ino`) of `fd`'s directory and every directory above it up to `/`, nearest
 * first (`fd` itself first). Crossing a mount goes to the directory the mount sits on, as in the caller's
 * view. Throws `E_FILE_READ` when a parent cannot be opened.
 */
export function ancestorIdentities(fd: number): string[] {
  const { sym, errno, flags } = linux();
  const out: string[] = [];
  let current = reopenFd(fd);
  try {
    for (let i = 0; i < MAX_ANCESTORS; i++) {
      const identity = fdInfo(current).identity;
      if (out.at(-1) === identity) break; // `/..` is `/` itself.
      out.push(identity);
      const parent = sym.openat(current, cPath(".."), O.PATH | O.CLOEXEC | flags.O_DIRECTORY, 0);
      if (parent < 0) {
        // A file (not a directory) has no `..`: its parent is the directory it was opened in, unknown here.
        if (fdInfo(current).kind !== "dir") break;
        throw new FileError(
          "E_FILE_READ",
          `Could not open the parent of descriptor ${fd} (errno ${errno()})`,
        );
      }
      closeFd(current);
      current = parent;
    }
  } finally {
    closeFd(current);
  }
  return out;
}

/** Where an open descriptor is within its filesystem. */
export interface FsLocation {
  /** The filesystem's device as mountinfo gives it (`major:minor`). */
  readonly device: string;
  /** The path within that filesystem (the mount's root field joined with the path below the mount point). */
  readonly path: string;
}

/** Decodes mountinfo's octal escapes. */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** `/proc/self/mountinfo` by mount id: device, root within the filesystem, mount point. */
export function mountTable(): Map<string, { device: string; root: string; point: string }> {
  const table = new Map<string, { device: string; root: string; point: string }>();
  for (const line of Deno.readTextFileSync("/proc/self/mountinfo").split("\n")) {
    const fields = line.split(" ");
    if (fields.length < 5) continue;
    table.set(fields[0]!, { device: fields[2]!, root: unescape(fields[3]!), point: unescape(fields[4]!) });
  }
  return table;
}

/**
 * Where `fd` is within its filesystem, or `null` when the kernel's view cannot be read (deleted, or a
 * path the mount table does not explain). `table` is {@link mountTable} (read once per caller).
 */
export function fsLocation(
  fd: number,
  table: ReadonlyMap<string, { device: string; root: string; point: string }>,
): FsLocation | null {
  let id: string | undefined;
  let path: string;
  try {
    id = /^mnt_id:\s*(\d+)$/m.exec(Deno.readTextFileSync(`/proc/self/fdinfo/${fd}`))?.[1];
    path = Deno.readLinkSync(fdProcPath(fd));
  } catch {
    return null; // /proc unreadable: the caller's identity walk still applies.
  }
  const mount = id === undefined ? undefined : table.get(id);
  if (mount === undefined || !path.startsWith("/") || path.endsWith(" (deleted)")) return null;
  const point = mount.point;
  const inside = point === "/"
    ? path
    : path === point
    ? ""
    : path.startsWith(`${point}/`)
    ? path.slice(point.length)
    : null;
  if (inside === null) return null;
  const joined = mount.root === "/" ? (inside === "" ? "/" : inside) : `${mount.root}${inside}`;
  return { device: mount.device, path: joined };
}

/** True when the location `inner` is `outer` or below it (same filesystem). */
export function locatedWithin(inner: FsLocation, outer: FsLocation): boolean {
  if (inner.device !== outer.device) return false;
  if (outer.path === "/") return true;
  return inner.path === outer.path || inner.path.startsWith(`${outer.path}/`);
}
