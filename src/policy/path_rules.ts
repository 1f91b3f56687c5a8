/**
 * The shape every policy path (and the workspace) must have: absolute and already normalized. Specter
 * never normalizes a path for the author, because a path that only works after normalization (`..`) is
 * usually a mistake or an attempt to climb out of an allowed directory.
 *
 * @module
 */
import type { PolicyErrorCode } from "../errors.ts";

/** What is wrong with a path: a stable code and a phrase that completes "Field X …". */
export interface PathFault {
  /** `E_POLICY_PATH_RELATIVE`, `E_POLICY_PATH_DOTDOT`, or `E_POLICY_SCHEMA` for a NUL byte. */
  readonly code: Extract<
    PolicyErrorCode,
    "E_POLICY_PATH_RELATIVE" | "E_POLICY_PATH_DOTDOT" | "E_POLICY_SCHEMA"
  >;
  /** E.g. `must be an absolute path`. */
  readonly reason: string;
}

/**
 * Checks that `path` is absolute and normalized: starts with `/`, and has no `.` or `..` segment, no
 * `//` and no trailing `/` (except the root itself). Returns `null` when it is fine. An empty path is
 * relative.
 */
export function pathFault(path: string): PathFault | null {
  // A NUL byte cannot be part of a real path; it would cut the path short in the C APIs downstream.
  if (path.includes("\0")) return { code: "E_POLICY_SCHEMA", reason: "must not contain a NUL byte" };
  if (!path.startsWith("/")) {
    const hint = path.startsWith("~") ? ' (use "${home}" instead of "~")' : "";
    return { code: "E_POLICY_PATH_RELATIVE", reason: `must be an absolute path${hint}` };
  }
  if (path === "/") return null;
  const segments = path.slice(1).split("/");
  if (segments.includes("..")) return dotdot('without ".." segments');
  if (segments.includes(".")) return dotdot('without "." segments');
  if (path.endsWith("/")) return dotdot('without a trailing "/"');
  if (segments.includes("")) return dotdot('without "//"');
  return null;
}

function dotdot(what: string): PathFault {
  return { code: "E_POLICY_PATH_DOTDOT", reason: `must be a normalized path ${what}` };
}
