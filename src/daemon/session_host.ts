/**
 * The daemon's side of a running session: each frame written to the session's frame log before any
 * reader can take it (`sink`), then read as the session's authoritative reader and fanned out to its
 * watchers, audit and command rows (`run`); at its end, the log, network and audit closed, the keeper
 * told to let go, the end recorded (`exit.json`) and the watchers told.
 *
 * @module
 */
import { join } from "node:path";
import { toSpecterError } from "../errors.ts";
import type { ExitFrame, Frame } from "../protocol/mod.ts";
import { auditFrame } from "../session/mod.ts";
import { ptyExitedOf } from "./remote_access.ts";
import { type Entry, sendFrame } from "./registry.ts";
import type { KeeperLink } from "./keeper_link.ts";
import type { SessionRecords } from "./session_records.ts";
import type { DaemonConfig, DaemonLog } from "./options.ts";

/** Logs, fans out and ends the sessions this daemon runs. */
export class SessionHost {
  readonly #options: Pick<DaemonConfig, "sync">;
  readonly #keeper: KeeperLink;
  readonly #records: SessionRecords;
  readonly #log: DaemonLog;

  constructor(
    options: Pick<DaemonConfig, "sync">,
    keeper: KeeperLink,
    records: SessionRecords,
    log: DaemonLog,
  ) {
    this.#options = options;
    this.#keeper = keeper;
    this.#records = records;
    this.#log = log;
  }

  /** Writes a frame to the session's log before any reader can take it. */
  sink(entry: Entry, frame: Frame): void {
    const store = entry.store;
    if (store === null) return;
    try {
      store.append(
        frame,
        entry.session?.outputConsumed ?? store.lastRaw,
        this.#options.sync === "always" ? "always" : "never",
      );
      entry.loggedTo = frame.seq;
    } catch (error: unknown) {
      entry.store = null;
      store.close();
      const specter = toSpecterError(error);
      this.#log(`session "${entry.name}": ${specter.message}`);
      // Told after the frame being logged (the sink runs inside the session's emit).
      queueMicrotask(() => {
        if (entry.session?.finished === false) {
          entry.session.reportError("E_LOG_WRITE", `Frame logging stopped: ${specter.message}`, {
            cause_code: specter.code,
          });
        }
      });
    }
  }

  /** Reads the session's frames (every frame must be taken, or it pauses) and fans them out. */
  run(entry: Entry, next: () => Promise<Frame[]> = () => entry.session!.nextFrames()): void {
    const session = entry.session!;
    entry.finished = (async () => {
      for (;;) {
        const batch = await next();
        if (batch.length === 0) break;
        for (const frame of batch) {
          entry.delivered = frame.seq;
          if (entry.audit !== null) auditFrame(entry.audit, frame);
          entry.rows?.frame(frame);
          for (const watcher of entry.watchers) sendFrame(watcher, entry.name, frame);
        }
      }
      const exit = await session.exited;
      entry.exit = exit;
      this.#log(
        `session "${entry.name}" ended: ${
          exit.signal === null ? `code ${exit.code}` : `signal ${exit.signal}`
        }${exit.timed_out ? " (timed out)" : ""}`,
      );
      entry.store?.close();
      entry.store = null;
      // Its last connections are audited as the proxy closes: before the audit log is.
      await entry.net?.close();
      entry.net = null;
      this.#records.closeAudit(entry);
      this.#keeper.client.release(entry.name);
      this.recordExit(entry, exit);
      const notice = ptyExitedOf(entry.name, exit, entry.saved);
      for (const watcher of entry.watchers) {
        // The viewer's notice goes to remote clients (the unix socket's have the exit frame as their last).
        if (watcher.access.scope !== "local") sendFrame(watcher, entry.name, notice);
        watcher.send({ jsonrpc: "2.0", method: "session.end", params: { name: entry.name } });
      }
      entry.watchers.clear();
      entry.controller = null;
    })();
  }

  /** Records a session's end beside its log (`exit.json`), so that the next daemon lists it too. */
  recordExit(entry: Entry, exit: ExitFrame): void {
    try {
      Deno.writeTextFileSync(join(entry.dir, "exit.json"), JSON.stringify(exit) + "\n", { mode: 0o600 });
    } catch (error: unknown) {
      this.#log(`session "${entry.name}": its end could not be recorded (${String(error)})`);
    }
  }

  /** Ends a session; resolves once it has ended and its end is recorded. */
  async end(entry: Entry): Promise<void> {
    const session = entry.session;
    if (session !== null && entry.exit === null) {
      await session.terminate();
      await entry.finished;
    }
  }
}
