/**
 * The per-run audit log: `audit.ndjson` in the run's artifacts directory, one JSON object per event,
 * appended and flushed as it happens so that a run that fails (or is killed) still leaves its record.
 * Environment values never appear in it.
 *
 * @module
 */
import { join } from "node:path";
import { SessionError } from "../errors.ts";
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
  readonly #file: Deno.FsFile;
  readonly #runId: string;
  /** The directory the log lives in. */
  readonly dir: string;

  private constructor(file: Deno.FsFile, dir: string, runId: string) {
    this.#file = file;
    this.dir = dir;
    this.#runId = runId;
  }

  /** Creates `dir` if needed and opens its audit log for appending (throws `E_IO`). */
  static open(dir: string, runId: string): AuditLog {
    try {
      Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
      const file = Deno.openSync(join(dir, AUDIT_FILE), { append: true, create: true, mode: 0o600 });
      return new AuditLog(file, dir, runId);
    } catch (error: unknown) {
      throw new SessionError("E_IO", `Cannot write the audit log in "${dir}": ${(error as Error).message}`, {
        cause: error,
        details: { dir },
      });
    }
  }

  /** Appends one event (written straight through to the file). */
  record(event: AuditEvent, fields: Record<string, unknown>): void {
    const line = JSON.stringify({ ts: nowSeconds(), run_id: this.#runId, event, ...fields }) + "\n";
    const bytes = new TextEncoder().encode(line);
    for (let written = 0; written < bytes.length;) written += this.#file.writeSync(bytes.subarray(written));
  }

  /** Closes the file. */
  close(): void {
    this.#file.close();
  }
}
