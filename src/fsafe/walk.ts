/**
 * `walkBeneath`: every entry of a directory tree that a sandboxed program could have written, visited
 * without ever following a symlink. One walk serves the bundle's checksums and the workspace archive.
 *
 * @module
 */
import { closeFd, fdInfo, fdProcPath, type FileKind, openBeneath } from "./open.ts";

/** An entry {@link walkBeneath} met: opened and identified, or refused (a symlink, gone, changed). */
export type WalkEntry =
  | { readonly path: string; readonly kind: FileKind; readonly identity: string }
  | { readonly path: string; readonly error: unknown };

/**
 * Visits every entry beneath `rootFd`, depth first, by its path relative to the root. Each entry is opened
 * beneath the root with no symlink in any component (`openBeneath`) and identified through that
 * descriptor; directories are entered (not visited). An entry that could not be opened (a symlink, or one
 * that vanished or changed under us) is visited with the error that refused it: the visitor decides
 * whether that is a marker, a skip or a failure. What the visitor reads, it opens again beneath the root
 * (the identity tells whether it is still the same file).
 */
export function walkBeneath(rootFd: number, visit: (entry: WalkEntry) => void, prefix = ""): void {
  const here = prefix === "" ? rootFd : openBeneath(rootFd, prefix, { mode: "handle" });
  try {
    for (const entry of Deno.readDirSync(fdProcPath(here))) {
      const path = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
      let handle: number;
      try {
        handle = openBeneath(rootFd, path, { mode: "handle" });
      } catch (error: unknown) {
        visit({ path, error });
        continue;
      }
      try {
        const { kind, identity } = fdInfo(handle);
        if (kind === "dir") walkBeneath(rootFd, visit, path);
        else visit({ path, kind, identity });
      } finally {
        closeFd(handle);
      }
    }
  } finally {
    if (here !== rootFd) closeFd(here);
  }
}
