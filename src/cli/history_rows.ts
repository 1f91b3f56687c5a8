/**
 * The command log from the command line: `run`, `exec` and `agent` sessions add their rows to
 * `$XDG_DATA_HOME/specter/log.sqlite` as the daemon's do (`specter history` lists them all). A log that
 * cannot be opened or written is said on stderr; the run goes on (its audit log is its record).
 *
 * @module
 */
import { type AuthorKind, CommandLog, defaultCommandLogPath } from "../history/mod.ts";
import type { Frame } from "../protocol/mod.ts";
import { fingerprintPlan } from "../sandbox/mod.ts";
import { CommandRows, type Session } from "../session/mod.ts";
import { toSpecterError } from "../errors.ts";

/** A session's rows and the log they go to. */
export interface SessionRows {
  /** Every frame of the session, in order. */
  frame(frame: Frame): void;
  /** Closes the log (after the exit frame). */
  close(): void;
}

/** Opens the command log for `session`'s rows; none (said with `warn`) when it cannot be opened. */
export function openSessionRows(
  session: Session,
  authorKind: AuthorKind,
  warn: (text: string) => void,
): SessionRows {
  let log: CommandLog;
  try {
    log = CommandLog.open(defaultCommandLogPath());
  } catch (error: unknown) {
    const failure = toSpecterError(error);
    warn(`specter: ${failure.code}: ${failure.message}; the command is not in the command log`);
    return { frame: () => {}, close: () => {} };
  }
  const plan = session.launch.plan;
  let warned = false;
  const rows = new CommandRows(log, {
    session: session.info.id,
    argv: session.argv,
    cwd: session.cwd,
    policyHash: plan === null ? null : fingerprintPlan(plan).policy_sha256,
    authorKind,
    author: null,
  }, (error) => {
    if (warned) return;
    warned = true;
    const failure = toSpecterError(error);
    warn(`specter: ${failure.code}: ${failure.message}`);
  });
  return { frame: (frame) => rows.frame(frame), close: () => log.close() };
}
