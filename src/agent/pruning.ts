/**
 * Which session makes room for a new one at the cap. A result still owed is never lost: a session with a
 * call in progress (an `exec_command` or `write_stdin` waiting, a `read_output`) is never ended, nor is one
 * of the {@link PROTECTED_RECENT} most recently used (as Codex's unified exec protects 8). Of the rest, the
 * least recently used exited session goes first, else the least recently used one; none may go:
 * `E_SESSION_LIMIT`, and the new session is not started.
 *
 * @module
 */
import { SessionError } from "../errors.ts";

/** Sessions most recently used (by calls) that pruning never ends (as Codex's unified exec). */
export const PROTECTED_RECENT = 8;

/** What pruning needs to know of a session. */
export interface Prunable {
  /** Calls in progress on it. */
  readonly busy: number;
  /** When a call last started or ended on it (`performance.now()`). */
  readonly lastUsed: number;
  /** Its exit, once the program ended. */
  readonly exit: unknown;
}

/**
 * The session to end so that one more fits `max` (null: there is room). Throws `E_SESSION_LIMIT` when
 * every session is busy or protected. With a cap below 9, all but one are protected at most.
 */
export function victimFor<T extends Prunable>(sessions: Iterable<T>, max: number): T | null {
  const byUse = [...sessions].sort((a, b) => a.lastUsed - b.lastUsed);
  if (byUse.length < max) return null;
  const protectedCount = Math.min(PROTECTED_RECENT, max - 1);
  const open = byUse.slice(0, Math.max(0, byUse.length - protectedCount)).filter((s) => s.busy === 0);
  const victim = open.find((s) => s.exit !== null) ?? open[0];
  if (victim !== undefined) return victim;
  throw new SessionError(
    "E_SESSION_LIMIT",
    `All ${max} sessions are in use (a call in progress, or among the ${protectedCount} most recently ` +
      "used): close one with close_session, or try again when a call has returned",
    { details: { max_sessions: max } },
  );
}
