/**
 * Which paths a policy may name, per use: `exec` (programs), `read` or `write`. Broad roots come from
 * {@link BROAD_ROOTS}; on top of that, some trees are never allowed, and system trees are never
 * writable. Checked on the policy's text and again, at spawn, on the path each entry resolves to.
 *
 * @module
 */
import { insideTree as inside, SYSTEM_TREES, systemTreeOf } from "../fsafe/mod.ts";
import { broadRootReason, stripTrailingSlashes } from "./broad_roots.ts";

/** Trees never writable: the system itself, and state and logs other programs trust. */
export { SYSTEM_TREES };

/** How a policy path is used. */
export type PathUse = "exec" | "read" | "write" | "socket";

/** Trees never allowed in any list: kernel interfaces and runtime sockets (e.g. `/run/docker.sock`). */
export const FORBIDDEN_TREES = ["/proc", "/sys", "/dev", "/run", "/var/run", "/private/var/run"] as const;

/** Runtime trees a `socket` grant may name a socket in (nothing else of them becomes visible). */
const RUNTIME_TREES: readonly string[] = ["/run", "/var/run", "/private/var/run"];

/** Broad roots that are nonetheless fine as `exec` entries: the standard binary directories. */
export const BINARY_DIRS = ["/bin", "/sbin"] as const;

/**
 * Why `path` (absolute, normalized) cannot be used for `use`, or `null` when it can. `home` is the
 * caller's home directory (see {@link broadRootReason}).
 */
export function pathSafetyReason(path: string, use: PathUse, home: string): string | null {
  const clean = stripTrailingSlashes(path);
  // Sockets live under /run (e.g. /run/user/1000/bus): a named socket there is what the grant is for.
  const forbidden = FORBIDDEN_TREES.filter((tree) => use !== "socket" || !RUNTIME_TREES.includes(tree))
    .find((tree) => inside(clean, tree));
  if (forbidden !== undefined) return `is inside "${forbidden}", which a policy may never grant`;
  if (use === "write") {
    const system = systemTreeOf(clean);
    if (system !== undefined) return `is inside the system tree "${system}", which is never writable`;
  }
  if (use === "exec" && (BINARY_DIRS as readonly string[]).includes(clean)) return null;
  return broadRootReason(clean, home);
}
