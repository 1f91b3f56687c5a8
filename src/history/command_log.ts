/**
 * The command log: one row per command a session ran (from a shell's OSC 133 marks, or an `exec`), in
 * SQLite (`node:sqlite`, built into Deno) at `$XDG_DATA_HOME/specter/log.sqlite`, in WAL mode with
 * `synchronous = NORMAL` (as shell-history tools keep theirs: a crash of the process loses nothing, a
 * power loss at most the last commits). The schema is versioned (`PRAGMA user_version`) and migrated
 * forward on open; spec/data-model.md documents it.
 *
 * Output is kept plain (escape sequences removed), capped at {@link OUTPUT_CAP} bytes (head kept, the cap
 * and the original size recorded) and deflated.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { deflateSync, inflateSync } from "node:zlib";
import { basename, dirname, join } from "node:path";
import { DaemonError, FileError } from "../errors.ts";
import { closeFd, fdInfo, fdProcPath, openBeneath, openFileBeneath, openWriteDir } from "../fsafe/mod.ts";

/** Output bytes kept per command (UTF-8, before compression). */
export const OUTPUT_CAP = 64 * 1024;

/**
 * Who typed a command (as atuin records it), as Specter knows it from the connection that started the
 * session, never from what a client says: a person at a local client, an agent (the agent tools), or a
 * remote client of the daemon's listener (the token's label is the row's `author`).
 */
export type AuthorKind = "human" | "agent" | "remote";

/**
 * Who reported a row's exit code and timing: `specter` (the program itself, from the kernel's wait status),
 * `shell` (Specter's shell integration: marks with a nonce only the shell holds), `output` (marks without
 * it: any program in the session could have printed them), `unknown` (a row from before 0.7).
 */
export type Reporter = "specter" | "shell" | "output" | "unknown";

/** One command to record. */
export interface CommandRecord {
  readonly session: string;
  /** Unix time (s) the command started and ended. */
  readonly startedAt: number;
  readonly endedAt: number;
  readonly command: string;
  readonly cwd: string | null;
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** The command's output as text (escape sequences already removed). */
  readonly output: string;
  /** The sha-256 of the policy the session ran under (null: no policy). */
  readonly policyHash: string | null;
  readonly authorKind: AuthorKind;
  /** Who, when known (an agent's name, a user name). */
  readonly author: string | null;
  /** Where the record came from: `osc133` (a shell's marks) or `exec` (a program run to its end). */
  readonly source: "osc133" | "exec";
  /** Who reported its exit code and timing. */
  readonly reportedBy: Reporter;
  /** The session's frames the command covers (null for `exec` without a session log). */
  readonly seqFrom: number | null;
  readonly seqTo: number | null;
}

/** A command as read back. */
export interface CommandRow {
  readonly id: number;
  readonly session: string;
  readonly started_at: number;
  readonly ended_at: number;
  readonly duration_ms: number;
  readonly command: string;
  readonly cwd: string | null;
  readonly exit_code: number | null;
  readonly signal: string | null;
  readonly output: string;
  readonly output_bytes: number;
  readonly output_cap: number;
  readonly output_truncated: boolean;
  readonly policy_hash: string | null;
  readonly hostname: string;
  readonly author_kind: AuthorKind;
  readonly author: string | null;
  readonly source: string;
  readonly reported_by: Reporter;
  readonly seq_from: number | null;
  readonly seq_to: number | null;
}

/** What `specter history` asks for. */
export interface HistoryQuery {
  readonly session?: string;
  readonly failed?: boolean;
  readonly grep?: string;
  /** Most rows (newest first before they are put back in order). Default 1000. */
  readonly limit?: number;
}

/** The migrations, in order: entry `i` takes the schema from version `i` to `i + 1`. */
export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE commands (
    id INTEGER PRIMARY KEY,
    session TEXT NOT NULL,
    started_at REAL NOT NULL,
    ended_at REAL NOT NULL,
    duration_ms REAL NOT NULL,
    command TEXT NOT NULL,
    cwd TEXT,
    exit_code INTEGER,
    signal TEXT,
    output BLOB NOT NULL,
    output_bytes INTEGER NOT NULL,
    output_cap INTEGER NOT NULL,
    output_truncated INTEGER NOT NULL,
    policy_hash TEXT,
    hostname TEXT NOT NULL,
    author_kind TEXT NOT NULL CHECK (author_kind IN ('human', 'agent')),
    author TEXT,
    source TEXT NOT NULL,
    seq_from INTEGER,
    seq_to INTEGER
  );
  CREATE INDEX commands_session ON commands (session, started_at);
  CREATE INDEX commands_started ON commands (started_at);`,
  // 0.7: remote authors, and who reported each row (SQLite changes a CHECK only by copying the table).
  `CREATE TABLE commands_v2 (
    id INTEGER PRIMARY KEY,
    session TEXT NOT NULL,
    started_at REAL NOT NULL,
    ended_at REAL NOT NULL,
    duration_ms REAL NOT NULL,
    command TEXT NOT NULL,
    cwd TEXT,
    exit_code INTEGER,
    signal TEXT,
    output BLOB NOT NULL,
    output_bytes INTEGER NOT NULL,
    output_cap INTEGER NOT NULL,
    output_truncated INTEGER NOT NULL,
    policy_hash TEXT,
    hostname TEXT NOT NULL,
    author_kind TEXT NOT NULL CHECK (author_kind IN ('human', 'agent', 'remote')),
    author TEXT,
    source TEXT NOT NULL,
    seq_from INTEGER,
    seq_to INTEGER,
    reported_by TEXT NOT NULL DEFAULT 'unknown' CHECK (reported_by IN ('specter', 'shell', 'output', 'unknown'))
  );
  INSERT INTO commands_v2 SELECT id, session, started_at, ended_at, duration_ms, command, cwd, exit_code, signal,
    output, output_bytes, output_cap, output_truncated, policy_hash, hostname, author_kind, author, source,
    seq_from, seq_to, CASE source WHEN 'exec' THEN 'specter' ELSE 'unknown' END FROM commands;
  DROP TABLE commands;
  ALTER TABLE commands_v2 RENAME TO commands;
  CREATE INDEX commands_session ON commands (session, started_at);
  CREATE INDEX commands_started ON commands (started_at);`,
];

/** `$XDG_DATA_HOME/specter/log.sqlite`, else `~/.local/share/specter/log.sqlite`. */
export function defaultCommandLogPath(env: (name: string) => string | undefined = Deno.env.get): string {
  const data = env("XDG_DATA_HOME");
  const base = data !== undefined && data.startsWith("/")
    ? data
    : join(env("HOME") ?? "/root", ".local", "share");
  return join(base, "specter", "log.sqlite");
}

/** SQLite's companions of a database file: none may be a link either. */
const COMPANIONS = ["", "-wal", "-shm", "-journal"] as const;

/**
 * Makes the log's directory (0700, one component at a time, never through a link) and its file (0600),
 * and returns the file's real path for SQLite. A program that could write there in an earlier run (a
 * grant over `~/.local/share`) may have left `log.sqlite -> /etc/passwd`: SQLite, which opens by name,
 * would create or open the target, and a chmod by name would make it 0600. So the file and its companions
 * are checked by descriptor first (a link or anything but a regular file is refused), and the chmod goes
 * through the checked inode. From then on the directory exists and no launch may grant it (it is hidden,
 * or the launch refused: `specterStateDirs`), so nothing replaces them between this check and SQLite's open.
 */
function openLogFile(path: string): string {
  const name = basename(path);
  const dirFd = openWriteDir(dirname(path), { create: true, mode: 0o700 });
  try {
    for (const suffix of COMPANIONS) {
      let fd = -1;
      try {
        fd = openBeneath(dirFd, `${name}${suffix}`);
        const kind = fdInfo(fd).kind;
        if (kind !== "file") {
          throw new FileError("E_FILE_TYPE", `"${name}${suffix}" is a ${kind}, not a regular file`, {
            details: { path: `${name}${suffix}`, kind },
          });
        }
      } catch (error: unknown) {
        if (!(error instanceof FileError) || error.code !== "E_PATH_NOT_FOUND") throw error;
      } finally {
        closeFd(fd);
      }
    }
    const { file, existing } = openFileBeneath(dirFd, name, { how: "append", mode: 0o600 });
    file.close();
    try {
      if (existing >= 0) Deno.chmodSync(fdProcPath(existing), 0o600);
    } finally {
      closeFd(existing);
    }
    return join(Deno.readLinkSync(fdProcPath(dirFd)), name);
  } finally {
    closeFd(dirFd);
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const REPORTED: readonly Reporter[] = ["specter", "shell", "output", "unknown"];

/** The command log database. */
export class CommandLog {
  readonly path: string;
  readonly #db: DatabaseSync;
  readonly #insert;
  readonly #hostname = Deno.hostname();

  private constructor(path: string, db: DatabaseSync) {
    this.path = path;
    this.#db = db;
    this.#insert = db.prepare(
      `INSERT INTO commands (session, started_at, ended_at, duration_ms, command, cwd, exit_code, signal,
        output, output_bytes, output_cap, output_truncated, policy_hash, hostname, author_kind, author, source,
        seq_from, seq_to, reported_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
  }

  /**
   * Opens (creating, 0600 in a 0700 directory) and migrates the log. Throws `E_LOG_WRITE` when it cannot
   * be opened or is from a newer Specter (a schema version this one does not know).
   */
  static open(path: string = defaultCommandLogPath()): CommandLog {
    try {
      const real = openLogFile(path);
      const db = new DatabaseSync(real);
      try {
        // The busy timeout first: switching to WAL waits for another process opening the log at the same time.
        db.exec("PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
        migrate(db);
        return new CommandLog(path, db);
      } catch (error: unknown) {
        db.close();
        throw error;
      }
    } catch (error: unknown) {
      if (error instanceof DaemonError) throw error;
      throw new DaemonError("E_LOG_WRITE", `The command log "${path}" cannot be opened`, {
        cause: error,
        details: { path },
      });
    }
  }

  /** The schema version in force. */
  get version(): number {
    return schemaVersion(this.#db);
  }

  /** Records one command (throws `E_LOG_WRITE` when the database refuses it, e.g. a full disk). */
  record(record: CommandRecord): void {
    const bytes = encoder.encode(record.output);
    const kept = bytes.length > OUTPUT_CAP ? cutAtCharacter(bytes, OUTPUT_CAP) : bytes;
    try {
      this.#insert.run(
        record.session,
        record.startedAt,
        record.endedAt,
        Math.max(0, (record.endedAt - record.startedAt) * 1000),
        record.command,
        record.cwd,
        record.exitCode,
        record.signal,
        deflateSync(kept),
        bytes.length,
        OUTPUT_CAP,
        bytes.length > OUTPUT_CAP ? 1 : 0,
        record.policyHash,
        this.#hostname,
        record.authorKind,
        record.author,
        record.source,
        record.seqFrom,
        record.seqTo,
        record.reportedBy,
      );
    } catch (error: unknown) {
      throw new DaemonError("E_LOG_WRITE", `The command log "${this.path}" refused a record`, {
        cause: error,
      });
    }
  }

  /** The commands matching `query`, oldest first. */
  query(query: HistoryQuery = {}): CommandRow[] {
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (query.session !== undefined) {
      where.push("session = ?");
      args.push(query.session);
    }
    if (query.failed === true) {
      where.push("((exit_code IS NOT NULL AND exit_code != 0) OR signal IS NOT NULL)");
    }
    if (query.grep !== undefined) {
      where.push("instr(command, ?) > 0");
      args.push(query.grep);
    }
    const sql = `SELECT * FROM commands ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY started_at DESC, id DESC LIMIT ?`;
    args.push(query.limit ?? 1000);
    const rows = this.#db.prepare(sql).all(...args) as Record<string, unknown>[];
    return rows.reverse().map((row) => ({
      id: Number(row.id),
      session: String(row.session),
      started_at: Number(row.started_at),
      ended_at: Number(row.ended_at),
      duration_ms: Number(row.duration_ms),
      command: String(row.command),
      cwd: row.cwd === null ? null : String(row.cwd),
      exit_code: row.exit_code === null ? null : Number(row.exit_code),
      signal: row.signal === null ? null : String(row.signal),
      output: decoder.decode(inflateSync(row.output as Uint8Array)),
      output_bytes: Number(row.output_bytes),
      output_cap: Number(row.output_cap),
      output_truncated: Number(row.output_truncated) === 1,
      policy_hash: row.policy_hash === null ? null : String(row.policy_hash),
      hostname: String(row.hostname),
      author_kind: row.author_kind === "agent" || row.author_kind === "remote" ? row.author_kind : "human",
      author: row.author === null ? null : String(row.author),
      source: String(row.source),
      seq_from: row.seq_from === null ? null : Number(row.seq_from),
      seq_to: row.seq_to === null ? null : Number(row.seq_to),
      reported_by: REPORTED.includes(row.reported_by as Reporter) ? row.reported_by as Reporter : "unknown",
    }));
  }

  /** Closes the database. */
  close(): void {
    this.#db.close();
  }
}

function schemaVersion(db: DatabaseSync): number {
  const row = db.prepare("PRAGMA user_version").get() as { user_version?: number } | undefined;
  return Number(row?.user_version ?? 0);
}

/** Applies every migration past the database's version, each in its own transaction. */
function migrate(db: DatabaseSync): void {
  const version = schemaVersion(db);
  if (version > MIGRATIONS.length) {
    throw new DaemonError(
      "E_LOG_WRITE",
      `The command log has schema version ${version}; this Specter knows up to ${MIGRATIONS.length}`,
    );
  }
  if (version === MIGRATIONS.length) return;
  // The version is read again under the write lock: another process (a daemon, a `specter exec`) may have
  // migrated the log since, and a migration must run once.
  for (;;) {
    db.exec("BEGIN IMMEDIATE");
    try {
      const v = schemaVersion(db);
      if (v >= MIGRATIONS.length) {
        db.exec("COMMIT");
        return;
      }
      db.exec(MIGRATIONS[v]!);
      db.exec(`PRAGMA user_version = ${v + 1}`);
      db.exec("COMMIT");
    } catch (error: unknown) {
      db.exec("ROLLBACK");
      throw error;
    }
  }
}

/** The first `cap` bytes of `bytes`, not cutting a UTF-8 character. */
function cutAtCharacter(bytes: Uint8Array, cap: number): Uint8Array {
  let end = cap;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end);
}
