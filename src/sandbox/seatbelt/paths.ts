/**
 * Path checks and path arithmetic for Seatbelt profiles. The policy layer has already checked every
 * path, but a profile is the last place a bad path could turn into a rule, so the backend checks again:
 * absolute, normalized, free of NUL, valid Unicode and no longer than macOS allows.
 *
 * @module
 */
import { SandboxError } from "../../errors.ts";

/** Longest path accepted, in UTF-8 bytes: macOS's `PATH_MAX` (1024) less the terminating NUL. */
export const MAX_PATH_BYTES = 1023;

const encoder = new TextEncoder();

/**
 * Why `path` cannot appear in a Seatbelt profile, or `null` when it can. Only absolute, normalized
 * paths qualify (no empty, `.` or `..` segment, no trailing `/` except `/` itself): Seatbelt matches
 * the resolved path of a file, so `/a/../b` would silently match nothing, and the ancestor denials
 * below are computed segment by segment.
 */
export function profilePathProblem(path: string): string | null {
  if (!path.startsWith("/")) return "is not absolute";
  if (path.includes("\0")) return "contains a NUL byte";
  if (!path.isWellFormed()) return "is not valid Unicode (a lone surrogate has no UTF-8 form)";
  const bytes = encoder.encode(path).length;
  if (bytes > MAX_PATH_BYTES) return `is ${bytes} bytes long, more than macOS's ${MAX_PATH_BYTES}`;
  if (path === "/") return null;
  const segments = path.slice(1).split("/");
  if (segments.some((segment) => segment === "" || segment === "." || segment === "..")) {
    return "is not normalized (empty, `.` or `..` segment, or a trailing `/`)";
  }
  return null;
}

/** Throws `E_SANDBOX_START` naming `field` when {@link profilePathProblem} finds a problem. */
export function assertProfilePath(path: string, field: string): void {
  const problem = profilePathProblem(path);
  if (problem === null) return;
  // JSON.stringify: the path may hold newlines or control characters; the message stays one safe line.
  throw new SandboxError(
    "E_SANDBOX_START",
    `The Seatbelt profile cannot use ${field} ${JSON.stringify(path)}: it ${problem}`,
    {
      details: { field },
    },
  );
}

/** The proper ancestors of an absolute, normalized path, shallowest first: `/a/b/c` → `/`, `/a`, `/a/b`. */
export function ancestorsOf(path: string): string[] {
  if (path === "/") return [];
  const segments = path.slice(1).split("/");
  const ancestors = ["/"];
  for (let i = 1; i < segments.length; i++) ancestors.push(`/${segments.slice(0, i).join("/")}`);
  return ancestors;
}

/** Number of segments, as bubblewrap's bind order counts them (`/a/b` → 3); deeper paths sort later. */
export function pathDepth(path: string): number {
  return path.split("/").length;
}
