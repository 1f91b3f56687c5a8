/**
 * The system trees: the system itself, and state and logs other programs trust. No policy may make any of
 * them writable (`policy/path_safety.ts`), so nothing a sandbox wrote can be there, whoever the sandbox's
 * caller is. That is what makes a root-owned symlink in them trustworthy (`trusted.ts`): elsewhere a
 * root-owned link may be a root caller's sandbox's work, since a sandbox runs as its caller.
 *
 * @module
 */

/** Trees never writable by a policy. */
export const SYSTEM_TREES = [
  "/usr",
  "/etc",
  "/boot",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/var/lib",
  "/var/log",
  "/var/spool",
  "/var/cache",
  "/System",
  "/Library",
  "/private/etc",
] as const;

/** True when `path` (absolute, normalized) is `tree` or beneath it, compared case-insensitively. */
export function insideTree(path: string, tree: string): boolean {
  const p = path.toLowerCase();
  const t = tree.toLowerCase();
  return p === t || p.startsWith(`${t}/`);
}

/** The system tree `path` lies in, or undefined. */
export function systemTreeOf(path: string): string | undefined {
  return SYSTEM_TREES.find((tree) => insideTree(path, tree));
}
