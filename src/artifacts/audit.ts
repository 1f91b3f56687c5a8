/**
 * The per-run audit log: `audit.ndjson` in the run's artifacts directory, one JSON object per event,
 * appended and flushed as it happens so that a run that fails (or is killed) still leaves its record.
 * Environment values never appear in it.
 *
 * Records are whole or absent: each is one `write()` of the whole line, and when the disk fills part
 * way the file is truncated back to the last whole record. From the first failure on, the log writes
 * nothing more (a gap in the middle would be worse than a clean end) and {@link AuditLog.failure} says
 * why (`E_AUDIT`); recording never throws into the run it audits.
 *
 * @module
 */
import { join } from "node:path";
import { SessionError } from "../errors.ts";
import { LineFile } from "../fsafe/mod.ts";
import { nowSeconds } from "../session/session.ts";

/** The audit log's file name inside an artifacts directory. */
export const AUDIT_FILE = "audit.ndjson";

/** The events an audit log records, in the order a run produces them. */
export type AuditEvent = "start" | "launch" | "breach" | "end" | "error";

/**
 * The default artifacts directory of a run: `$XDG_STATE_HOME/specter/runs/<run-id>/`, where
 * `XDG_STATE_HOME` defaults to `~/.local/state`.
 */
export function defaultArtifactsDir(
  runId: string,
  env: { get(name: string): string | undefined } = Deno.env,
): string {
  const state = env.get("XDG_STATE_HOME") || join(env.get("HOME") ?? "/", ".local", "state");
  return join(state, "specter", "runs", runId);
}

/** Appends audit records to `<dir>/audit.ndjson`. */
export class AuditLog {
  readonly #file: LineFile;
  readonly #runId: string;
  /** The directory the log lives in. */
  readonly dir: string;

  #failure: SessionError | null = null;

  private constructor(file: LineFile, dir: string, runId: string) {
    this.#file = file;
    this.dir = dir;
    this.#runId = runId;
  }

  /** Creates `dir` if needed and opens its audit log for appending (throws `E_AUDIT`). */
  static open(dir: string, runId: string): AuditLog {
    try {
      Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
      return new AuditLog(LineFile.append(join(dir, AUDIT_FILE), "audit log"), dir, runId);
    } catch (error: unknown) {
      throw new SessionError(
        "E_AUDIT",
        `Cannot write the audit log in "${dir}": ${(error as Error).message}`,
        {
          cause: error,
          details: { dir },
        },
      );
    }
  }

  /** Appends one event (written straight through to the file). */
  record(event: AuditEvent, fields: Record<string, unknown>): void {
    const line = JSON.stringify({ ts: nowSeconds(), run_id: this.#runId, event, ...fields }) + "\n";
    this.#write(line);
  }

  /** The first failure to write a record (`E_AUDIT`), or `null` while every record was written whole. */
  get failure(): SessionError | null {
    return this.#failure;
  }

  /** Writes one whole line, or nothing and remembers why (never throws: the run goes on). */
  #write(line: string): void {
    if (this.#failure !== null) return;
    try {
      this.#file.append(line);
    } catch (error: unknown) {
      const details = (error as { details?: Record<string, unknown> }).details ?? {};
      this.#failure = new SessionError(
        "E_AUDIT",
        `The audit log "${join(this.dir, AUDIT_FILE)}" stopped: ${(error as Error).message}`,
        {
          cause: error,
          details: {
            path: join(this.dir, AUDIT_FILE),
            reason: String(details.reason ?? "io"),
            torn: details.torn === true,
          },
        },
      );
    }
  }

  /** Closes the file. */
  close(): void {
    this.#file.close();
  }
}
