/**
 * A session's records beyond its frame log, as the daemon holds them: its audit log (opened at launch by
 * the CLI's `audit` option, continued by a daemon that takes the session back, given its `end` by the
 * daemon that recorded the exit, closed once) and its rows of the command log.
 *
 * @module
 */
import { join } from "node:path";
import { SessionError, toSpecterError } from "../errors.ts";
import type { ExitFrame } from "../protocol/mod.ts";
import { auditFrame, CommandRows, type RunAudit } from "../session/mod.ts";
import { AUDIT_FILE, AuditLog } from "../artifacts/mod.ts";
import type { Entry } from "./registry.ts";
import type { DaemonConfig, DaemonLog } from "./options.ts";

/** Opens, continues and closes sessions' audit logs and command rows. */
export class SessionRecords {
  readonly #options: Pick<DaemonConfig, "commandLog" | "auditDir">;
  readonly #log: DaemonLog;

  constructor(options: Pick<DaemonConfig, "commandLog" | "auditDir">, log: DaemonLog) {
    this.#options = options;
    this.#log = log;
  }

  /**
   * Appends to the audit log of a session taken back (its chain continues: `resume`, then what the first
   * daemon would have recorded). A log that cannot be appended to (its chain broken, its disk full) is
   * said in the daemon's log and as an `E_AUDIT` error frame: the program already runs and is not killed
   * for it, but nobody is left to believe it audited.
   */
  resumeAudit(entry: Entry, fields: Record<string, unknown> | null): RunAudit | null {
    const where = entry.saved.audit;
    if (where === null) return null;
    let audit: RunAudit;
    try {
      const expected = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(where.run_id)
        ? this.#options.auditDir?.(where.run_id)
        : undefined;
      if (expected !== where.dir) {
        throw new SessionError("E_AUDIT", `"${where.dir}" is not where run "${where.run_id}" is audited`);
      }
      audit = { runId: where.run_id, dir: where.dir, log: AuditLog.open(where.dir, where.run_id) };
      if (fields !== null) audit.log.record("resume", fields);
      if (audit.log.failure !== null) throw audit.log.failure;
    } catch (error: unknown) {
      const specter = toSpecterError(error);
      this.#log(`session "${entry.name}": its audit log cannot go on: ${specter.message}`);
      entry.session?.reportError("E_AUDIT", `The session's audit log cannot go on: ${specter.message}`, {
        dir: where.dir,
      });
      return null;
    }
    return audit;
  }

  /** The command log rows of a session (null without a command log). */
  rowsFor(entry: Entry): CommandRows | null {
    const log = this.#options.commandLog;
    if (log === undefined || log === null) return null;
    const saved = entry.saved;
    return new CommandRows(log, {
      session: entry.name,
      argv: saved.argv,
      cwd: saved.cwd,
      policyHash: saved.policy_hash,
      authorKind: saved.author_kind,
      author: saved.author,
    }, (error) => this.#log(`session "${entry.name}": ${toSpecterError(error).message}`));
  }

  /**
   * The session ended and its log has the exit, but the daemon that logged it died before its audit did:
   * the audit gets its `end` (once: a log that ends with one is left as it is).
   */
  auditEnd(entry: Entry, exit: ExitFrame): void {
    const where = entry.saved.audit;
    if (where === null) return;
    try {
      const lines = Deno.readTextFileSync(join(where.dir, AUDIT_FILE)).trimEnd().split("\n");
      if ((JSON.parse(lines.at(-1)!) as { event?: unknown }).event === "end") return;
    } catch {
      // Unreadable or not a record: resumeAudit says why when it opens it.
    }
    const audit = this.resumeAudit(entry, null);
    if (audit === null) return;
    auditFrame(audit, exit);
    audit.log.close();
  }

  /** Closes a session's audit log, saying in the daemon's log when records were lost (a full disk). */
  closeAudit(entry: Entry): void {
    const audit = entry.audit;
    if (audit === null) return;
    entry.audit = null;
    const failure = audit.log.failure;
    if (failure !== null) this.#log(`session "${entry.name}": ${failure.code}: ${failure.message}`);
    audit.log.close();
  }
}
