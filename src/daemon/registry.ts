/**
 * The session registry: every session this daemon knows by name (running, taken back after a restart,
 * or ended and listed from its exit record), with what the daemon holds of each (its frame log, audit,
 * command rows, network, watchers and controller), and how a session is described to clients.
 *
 * @module
 */
import { join } from "node:path";
import { SessionError, toSpecterError } from "../errors.ts";
import type { ExitFrame, Frame, SavedSession, SessionEntry } from "../protocol/mod.ts";
import type { CommandRows, RunAudit, Session } from "../session/mod.ts";
import { AUDIT_FILE } from "../artifacts/mod.ts";
import type { Peer } from "../remote/mod.ts";
import type { FrameStore } from "./frame_store.ts";
import type { DaemonLog, SessionNet } from "./options.ts";

/** A session as the daemon holds it. */
export interface Entry {
  readonly name: string;
  readonly dir: string;
  readonly saved: SavedSession;
  /** The session's audit log, while this daemon runs it. */
  audit: RunAudit | null;
  /** Its network proxy and relay (a network allow list), while this daemon runs it. */
  net: SessionNet | null;
  readonly logId: string;
  session: Session | null;
  store: FrameStore | null;
  watchers: Set<Peer>;
  controller: Peer | null;
  delivered: number;
  acked: number;
  exit: ExitFrame | null;
  /** The last seq the frame log holds (it stops growing when logging failed). */
  loggedTo: number;
  /** Its rows of the command log (none without a command log). */
  rows: CommandRows | null;
  /** Resolves once the session ended and the daemon recorded its end (see `SessionHost.run`). */
  finished: Promise<void>;
}

/** Sends `frame` of session `name` to a client. */
export function sendFrame(connection: Peer, name: string, frame: Frame): void {
  connection.send({ jsonrpc: "2.0", method: "frame", params: { name, frame } });
}

/** The sessions by name. */
export class Registry {
  readonly #entries = new Map<string, Entry>();
  readonly #log: DaemonLog;

  constructor(log: DaemonLog) {
    this.#log = log;
  }

  /** Registers session `name` (replacing an ended one of that name), not yet running. */
  add(name: string, dir: string, saved: SavedSession, store: FrameStore | null): Entry {
    const entry: Entry = {
      name,
      dir,
      saved,
      logId: store?.logId ?? "",
      session: null,
      store,
      watchers: new Set(),
      controller: null,
      delivered: -1,
      acked: 0,
      audit: null,
      net: null,
      exit: null,
      loggedTo: (store?.nextSeq ?? 0) - 1,
      rows: null,
      finished: Promise.resolve(),
    };
    this.#entries.set(name, entry);
    return entry;
  }

  /** Session `name`, if any. */
  get(name: string): Entry | undefined {
    return this.#entries.get(name);
  }

  /** Whether a session is named `name`. */
  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /** Forgets session `name` (its files stay). */
  delete(name: string): void {
    this.#entries.delete(name);
  }

  /** How many sessions it lists. */
  get size(): number {
    return this.#entries.size;
  }

  /** Every session, in the order they were registered. */
  values(): IterableIterator<Entry> {
    return this.#entries.values();
  }

  /** Session `name`, or `E_SESSION_UNKNOWN`. */
  named(name: string): Entry {
    const entry = this.#entries.get(name);
    if (entry === undefined) {
      throw new SessionError("E_SESSION_UNKNOWN", `No session is named "${name}"`, { details: { name } });
    }
    return entry;
  }

  /** A session as `session.list` and `session.create` describe it. */
  describe(entry: Entry): SessionEntry {
    const exit = entry.exit;
    return {
      name: entry.name,
      pid: entry.saved.pid,
      running: exit === null,
      exit_code: exit?.code ?? null,
      signal: exit?.signal ?? null,
      timed_out: exit?.timed_out ?? false,
      duration_ms: exit?.duration_ms ?? null,
      started: entry.saved.started,
      argv: entry.saved.argv,
      title: entry.saved.title,
      description: entry.saved.description,
      parent_agent: entry.saved.parent_agent,
      clients: entry.watchers.size,
      next_seq: entry.delivered + 1,
      log_id: entry.logId === "" ? null : entry.logId,
      persist: entry.saved.persist,
      audit: entry.saved.audit === null ? null : join(entry.saved.audit.dir, AUDIT_FILE),
    };
  }

  /** A client went away: it watches and controls nothing any more. */
  forget(connection: Peer): void {
    for (const entry of this.#entries.values()) {
      entry.watchers.delete(connection);
      if (entry.controller === connection) entry.controller = null;
    }
  }

  /**
   * Unregisters an ended session and removes its files: its persistent layer (`persistDir`, derived from
   * the name, since bytes on disk are not trusted to say what to delete), then its directory.
   */
  purge(entry: Entry, persistDir: string): void {
    this.#entries.delete(entry.name);
    try {
      // The layer the program wrote (links in it are removed, never followed), then the session's files.
      // Derived from the name, not read back from session.json (bytes on disk are not trusted to say
      // what to delete).
      if (entry.saved.persist !== null) Deno.removeSync(persistDir, { recursive: true });
      Deno.removeSync(entry.dir, { recursive: true });
    } catch (error: unknown) {
      this.#log(`session "${entry.name}": its files could not be removed (${String(error)})`);
    }
  }

  /** Syncs every session's frame log to disk (a failure is logged: the next sync tries again). */
  syncAll(): void {
    for (const entry of this.#entries.values()) {
      try {
        entry.store?.sync();
      } catch (error: unknown) {
        this.#log(`session "${entry.name}": ${toSpecterError(error).message}`);
      }
    }
  }
}
