/**
 * Broad roots: directories too wide to grant in `fs.read` or `fs.write`. Granting one would hand the
 * program the whole system (or every user's files), which is never what a deny-by-default policy means.
 *
 * @module
 */

/**
 * Paths rejected in `fs.read` and `fs.write` (`E_POLICY_BROAD_ROOT`). Subpaths are fine
 * (`/usr/share/doc`, `/home/me/project`); the entries themselves are not. The home directory of the caller,
 * and any directory containing it, is rejected too (see {@link broadRootReason}).
 */
export const BROAD_ROOTS = [
  "/",
  "/usr",
  "/etc",
  "/proc",
  "/sys",
  "/dev",
  "/bin",
  "/sbin",
  "/lib",
  "/lib64",
  "/boot",
  "/root",
  "/home",
  "/run",
  "/var",
  "/tmp",
  "/opt",
  // Linux mount and data roots: like /Volumes on macOS they hold whole other filesystems.
  "/mnt",
  "/media",
  "/srv",
  "/nix",
  "/snap",
  // Shared, world-writable scratch space that survives reboots.
  "/var/tmp",
  // macOS.
  "/System",
  "/Users",
  "/Library",
  "/Applications",
  "/private",
  "/Volumes",
  // On macOS /etc, /var and /tmp are symlinks into /private, so these are the same broad roots again.
  "/private/etc",
  "/private/var",
  "/private/tmp",
  // The macOS data volume: every user's files live under it (/System/Volumes/Data/Users/…).
  "/System/Volumes/Data",
] as const;

/** One entry of {@link BROAD_ROOTS}. */
export type BroadRoot = (typeof BROAD_ROOTS)[number];

// macOS file systems are case-insensitive by default, so "/users" is "/Users" there. Comparing without
// case everywhere only rejects paths like "/USR" that do not exist on Linux anyway.
const BROAD_SET: ReadonlySet<string> = new Set(BROAD_ROOTS.map((root) => root.toLowerCase()));

/**
 * Why `path` (absolute, normalized) is too broad for `fs.read`/`fs.write`, or `null` when it is fine.
 * `home` is the caller's home directory; an empty or relative `home` skips the home checks (a policy using
 * `${home}` with such a home is rejected elsewhere).
 */
export function broadRootReason(path: string, home: string): string | null {
  const folded = path.toLowerCase();
  if (BROAD_SET.has(folded)) return `is the broad root "${path}"`;
  const homeDir = stripTrailingSlashes(home).toLowerCase();
  if (!homeDir.startsWith("/") || homeDir === "/") return null;
  if (folded === homeDir) return `is the home directory "${path}"`;
  if (homeDir.startsWith(folded + "/")) return `contains the home directory "${stripTrailingSlashes(home)}"`;
  return null;
}

/** `text` without trailing slashes, except that `/` stays `/`. Empty stays empty. */
export function stripTrailingSlashes(text: string): string {
  const stripped = text.replace(/\/+$/, "");
  return stripped === "" && text.startsWith("/") ? "/" : stripped;
}
