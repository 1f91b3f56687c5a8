/**
 * The daemon's link to its keeper (the process that holds the sessions' terminals): the keeper of the
 * moment (a new one is started for the next session when the last one died), what is acknowledged to it
 * (the output the frame logs hold), and what a refused message or a lost keeper means to the sessions.
 *
 * @module
 */
import type { SpecterError } from "../errors.ts";
import { KeeperClient } from "./keeper_client.ts";
import type { Registry } from "./registry.ts";
import type { DaemonLog } from "./options.ts";

/** The keeper of the moment, for every room that spawns, resumes, acknowledges or releases a session. */
export class KeeperLink {
  #client: KeeperClient;
  readonly #registry: Registry;
  readonly #log: DaemonLog;
  readonly #stateDir: string;
  readonly #startKeeper: () => void;

  constructor(
    client: KeeperClient,
    registry: Registry,
    options: { readonly stateDir: string; readonly startKeeper: () => void },
    log: DaemonLog,
  ) {
    this.#registry = registry;
    this.#log = log;
    this.#stateDir = options.stateDir;
    this.#startKeeper = options.startKeeper;
    this.#client = this.#watch(client);
  }

  /** The keeper now (read it at each use: it is replaced when it died, see {@link ensure}). */
  get client(): KeeperClient {
    return this.#client;
  }

  /** A keeper that died took its sessions; the next session gets a new one. */
  async ensure(): Promise<void> {
    if (!this.#client.closed) return;
    const keeper = await KeeperClient.connect(this.#stateDir, this.#startKeeper);
    this.#client = this.#watch(keeper);
  }

  /** Tells the keeper what the logs hold, so it stops holding it. */
  acknowledge(): void {
    this.#client.flushQueued();
    for (const entry of this.#registry.values()) {
      if (entry.session === null || entry.exit !== null) continue;
      const offset = entry.store?.lastRaw ?? entry.session.outputConsumed;
      if (offset > entry.acked) {
        entry.acked = offset;
        this.#client.ack(entry.name, offset);
      }
    }
  }

  close(): void {
    this.#client.close();
  }

  #watch(keeper: KeeperClient): KeeperClient {
    keeper.onClosed = () => this.#lost();
    keeper.onRefused = (id, error) => this.#refused(id, error);
    return keeper;
  }

  /** The keeper refused a message for session `id` nobody waits on (a `close_input`): its frames say so. */
  #refused(id: string, error: SpecterError): void {
    this.#log(`the keeper refused a message for session "${id}": ${error.message}`);
    const session = this.#registry.get(id)?.session;
    if (session !== null && session !== undefined && !session.finished) {
      session.reportError(error.code, error.message);
    }
  }

  #lost(): void {
    this.#log("the keeper went away: its sessions ended");
    for (const entry of this.#registry.values()) {
      if (entry.session !== null && !entry.session.finished) {
        entry.session.reportError("E_KEEPER", "The keeper that held this session's terminal went away");
      }
    }
  }
}
