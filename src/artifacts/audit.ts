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
 * The log is tamper-evident: each record carries `prev`, the sha256 of the record before it
 * (`audit_chain.ts`; `specter audit verify` checks it). A run appending to an existing log continues its
 * chain, and refuses (`E_AUDIT`) to append to a log whose chain is already broken.
 *
 * @module
 */
import { join } from "node:path";
import { SessionError, SpecterError } from "../errors.ts";
import { closeFd, LineFile, openFileBeneath, openWriteDir, readFd } from "../fsafe/mod.ts";
import { type AuditEvent, encodeAuditRecord } from "../protocol/mod.ts";
import { AUDIT_GENESIS, AUDIT_MAX_BYTES, nextPrev, recordHash } from "./audit_chain.ts";
import { nowSeconds } from "../clock.ts";

/** The audit log's file name inside an artifacts directory. */
export const AUDIT_FILE = "audit.ndjson";

/**
 * The default artifacts directory of a run: `$XDG_STATE_HOME/specter/runs/<run-id>/`, where
 * `XDG_STATE_HOME` defaults to `~/.local/state`.
 */
export function defaultArtifactsDir(
  runId: string,
  env: { get(name: string): string | undefined } = Deno.env,
): string {
  return join(defaultRunsDir(env), runId);
}

/** Where runs' default artifacts directories are: `$XDG_STATE_HOME/specter/runs/`. */
export function defaultRunsDir(env: { get(name: string): string | undefined } = Deno.env): string {
  const state = env.get("XDG_STATE_HOME") || join(env.get("HOME") ?? "/", ".local", "state");
  return join(state, "specter", "runs");
}

/** Appends audit records to `<dir>/audit.ndjson`. */
export class AuditLog {
  readonly #file: LineFile;
  readonly #runId: string;
  /** The directory the log lives in. */
  readonly dir: string;

  #failure: SessionError | null = null;
  #prev: string;

  private constructor(file: LineFile, dir: string, runId: string, prev: string) {
    this.#file = file;
    this.#prev = prev;
    this.dir = dir;
    this.#runId = runId;
  }

  /**
   * Creates `dir` if needed and opens its audit log for appending. Throws `E_AUDIT`: also when `dir` or
   * the log is, or passes through, a symlink a sandboxed program could have planted (`details.reason`
   * `symlink`: `dir` is made one component at a time and nothing is followed there), or the log is not a
   * regular file (`not_regular`).
   */
  static open(dir: string, runId: string): AuditLog {
    let dirFd = -1;
    let existing = -1;
    try {
      dirFd = openWriteDir(dir, { create: true, mode: 0o700 });
      const path = join(dir, AUDIT_FILE);
      const opened = openFileBeneath(dirFd, AUDIT_FILE, { how: "append", mode: 0o600 });
      existing = opened.existing;
      let prev = AUDIT_GENESIS;
      try {
        // The chain goes on from the log as it is, read through the inode that is appended to.
        if (existing >= 0) {
          prev = nextPrev(readFd(existing, { maxBytes: AUDIT_MAX_BYTES, what: "audit log" }, path));
        }
        // Anything but a whole chain (broken, too large) is not appended to.
        return new AuditLog(
          new LineFile(opened.file, path, opened.file.statSync().size, "audit log"),
          dir,
          runId,
          prev,
        );
      } catch (error: unknown) {
        opened.file.close();
        throw error;
      }
    } catch (error: unknown) {
      const code = error instanceof SpecterError ? error.code : null;
      const reason = code === "E_PATH_SYMLINK" ? "symlink" : code === "E_FILE_TYPE" ? "not_regular" : "io";
      const fix = reason === "symlink" ? "; name the real path instead" : "";
      throw new SessionError(
        "E_AUDIT",
        `Cannot write the audit log in "${dir}": ${(error as Error).message}${fix}`,
        { cause: error, details: { dir, reason, ...(code === null ? {} : { cause_code: code }) } },
      );
    } finally {
      closeFd(existing);
      closeFd(dirFd);
    }
  }

  /** Appends one event (written straight through to the file). */
  record(event: AuditEvent, fields: Record<string, unknown>): void {
    if (this.#failure !== null) return;
    let record: string;
    try {
      // `prev` is the writer's, not the caller's: the encoder puts it last, after the fields.
      record = encodeAuditRecord({
        ts: nowSeconds(),
        run_id: this.#runId,
        event,
        ...fields,
        prev: this.#prev,
      });
    } catch (error: unknown) {
      // Not a valid record (a bug, never the program's doing): the log stops as on a failed write.
      this.#stop(new Error(`its "${event}" record is not a valid audit record`, { cause: error }), "invalid");
      return;
    }
    if (this.#write(record + "\n")) this.#prev = recordHash(record);
  }

  /** The first failure to write a record (`E_AUDIT`), or `null` while every record was written whole. */
  get failure(): SessionError | null {
    return this.#failure;
  }

  /** Writes one whole line, or nothing and remembers why (never throws: the run goes on). */
  #write(line: string): boolean {
    if (this.#failure !== null) return false;
    try {
      this.#file.append(line);
      return true;
    } catch (error: unknown) {
      this.#stop(error, "io");
      return false;
    }
  }

  /** Remembers the first failure: from now on nothing more is written. */
  #stop(error: unknown, fallbackReason: string): void {
    const details = (error as { details?: Record<string, unknown> }).details ?? {};
    this.#failure = new SessionError(
      "E_AUDIT",
      `The audit log "${join(this.dir, AUDIT_FILE)}" stopped: ${(error as Error).message}`,
      {
        cause: error,
        details: {
          path: join(this.dir, AUDIT_FILE),
          reason: String(details.reason ?? fallbackReason),
          torn: details.torn === true,
        },
      },
    );
  }

  /** Closes the file. */
  close(): void {
    this.#file.close();
  }
}
