/**
 * `specter daemon`: one per user and state directory. It serves named sessions over a unix socket
 * (JSON-RPC 2.0 over NDJSON), logs every frame to the session's durable frame log before any client sees
 * it, and leaves the terminals to its keeper, so that neither a client nor the daemon itself going away
 * ends a session: a restarted daemon takes every session back from the keeper, resuming each terminal's
 * output where its log ends.
 *
 * The {@link Daemon} coordinates its rooms: the session registry (`registry.ts`), the link to the keeper
 * (`keeper_link.ts`), the running sessions' frame path and end (`session_host.ts`), their audit logs and
 * command rows (`session_records.ts`), launching (`launcher.ts`), recovery after a restart
 * (`recovery.ts`), the RPC method table and its door (`methods.ts`, with `attach.ts`), connections and
 * peers (`peers.ts`), remote clients (`remote_clients.ts`) and the agent bridge (`agent_bridge.ts`).
 *
 * @module
 */
import { join } from "node:path";
import { within } from "../clock.ts";
import { DaemonError } from "../errors.ts";
import { closeQuietly, tryLockFile } from "../pty/mod.ts";
import { ServiceLog } from "../fsafe/mod.ts";
import type { Peer } from "../remote/mod.ts";
import { KeeperClient } from "./keeper_client.ts";
import { KeeperLink } from "./keeper_link.ts";
import { Registry } from "./registry.ts";
import { SessionRecords } from "./session_records.ts";
import { SessionHost } from "./session_host.ts";
import { Launcher } from "./launcher.ts";
import { loadEnded, takeBack } from "./recovery.ts";
import { AgentBridge } from "./agent_bridge.ts";
import { listenOn, Peers } from "./peers.ts";
import { forgetRemote, RemoteClients } from "./remote_clients.ts";
import { type MethodContext, serveLine } from "./methods.ts";
import { privateDir } from "./paths.ts";
import type { DaemonConfig, RemoteListen } from "./options.ts";

export type { AuditedSession, CreateParams, RemoteListen, SessionNet } from "./options.ts";

/** How a daemon runs. */
export interface DaemonOptions extends DaemonConfig {
  /**
   * Answers `daemon.listen` and `daemon.revoke` (unix socket peers only): the CLI changes the listener
   * (through {@link Daemon.relisten}) and remembers it. None: those methods are refused.
   */
  readonly control?: (
    daemon: Daemon,
    method: "daemon.listen" | "daemon.revoke",
    params: unknown,
  ) => Promise<unknown>;
}

/** How often logged output is acknowledged to the keeper. */
const ACK_MS = 20;

/** How long `stop(true)` waits for the killed sessions' ends to be recorded and released. */
const STOP_ENDS_MS = 5_000;

/** A running daemon. */
export class Daemon {
  /** Resolves once the daemon stopped. */
  readonly done: Promise<void>;
  readonly #options: DaemonOptions;
  readonly #locks: number[];
  readonly #registry: Registry;
  readonly #keeper: KeeperLink;
  readonly #records: SessionRecords;
  readonly #host: SessionHost;
  readonly #launcher: Launcher;
  readonly #agents: AgentBridge;
  readonly #peers: Peers;
  readonly #remote: RemoteClients;
  readonly #methods: MethodContext;
  readonly #timers: ReturnType<typeof setInterval>[] = [];
  #resolve!: () => void;
  #stopped = false;
  readonly #serviceLog: ServiceLog;

  private constructor(options: DaemonOptions, locks: number[], listener: number, keeper: KeeperClient) {
    this.#options = options;
    this.#serviceLog = ServiceLog.open(join(options.stateDir, "daemon.log"));
    this.#locks = locks;
    this.done = new Promise((resolve) => this.#resolve = resolve);
    const log = (text: string) => this.#log(text);
    this.#registry = new Registry(log);
    this.#keeper = new KeeperLink(keeper, this.#registry, options, log);
    this.#records = new SessionRecords(options, log);
    this.#host = new SessionHost(options, this.#keeper, this.#records, log);
    const parts = {
      registry: this.#registry,
      keeper: this.#keeper,
      host: this.#host,
      records: this.#records,
    };
    this.#launcher = new Launcher(options, parts, log);
    this.#agents = new AgentBridge(options.agentBase, this.#registry, this.#launcher, log);
    const line = (peer: Peer, text: string | Error) => serveLine(this.#methods, peer, text);
    this.#peers = new Peers(listener, options.socketPath, this.#registry, line, log);
    this.#remote = new RemoteClients(
      options.stateDir,
      { line, closed: (peer, reason) => this.#peers.closed(peer, reason) },
      (peer) => this.#peers.add(peer),
      () => this.#agents.forMcp(),
      log,
    );
    const control = options.control;
    this.#methods = {
      options,
      ...parts,
      launcher: this.#launcher,
      agents: this.#agents,
      peers: this.#peers,
      started: Date.now() / 1000,
      remoteUrl: () => this.remoteUrl,
      stop: (killSessions) => this.stop(killSessions),
      control: control === undefined ? null : (method, params) => control(this, method, params),
      log,
    };
    this.#timers.push(setInterval(() => this.#keeper.acknowledge(), ACK_MS));
    // A client that stopped reading is dropped even when nothing more is sent to it.
    this.#timers.push(setInterval(() => this.#peers.checkStalls(), 500));
    const sync = options.sync ?? { everyMs: 50 };
    if (typeof sync === "object") {
      this.#timers.push(setInterval(() => this.#registry.syncAll(), sync.everyMs));
    }
  }

  /**
   * Starts a daemon: takes the state directory's and the socket's locks (`E_DAEMON_LOCKED` when another
   * daemon holds either), replaces a stale socket, connects to the keeper (starting it), takes back
   * every session the keeper holds, then listens.
   */
  static async start(options: DaemonOptions): Promise<Daemon> {
    privateDir(options.stateDir);
    privateDir(join(options.socketPath, ".."));
    const locks: number[] = [];
    for (const path of [join(options.stateDir, "daemon.lock"), `${options.socketPath}.lock`]) {
      const fd = tryLockFile(path);
      if (fd === null) {
        for (const held of locks) closeQuietly(held);
        throw new DaemonError("E_DAEMON_LOCKED", `Another daemon holds "${path}"`, { details: { path } });
      }
      locks.push(fd);
    }
    let keeper: KeeperClient;
    try {
      keeper = await KeeperClient.connect(options.stateDir, options.startKeeper);
    } catch (error: unknown) {
      for (const held of locks) closeQuietly(held);
      throw error;
    }
    try {
      Deno.removeSync(options.socketPath); // Stale: its daemon no longer holds the lock.
    } catch {
      // No socket was left.
    }
    forgetRemote(options.stateDir);
    const daemon = new Daemon(options, locks, listenOn(options.socketPath), keeper);
    if (options.remote !== undefined) {
      try {
        await daemon.#remote.listen(options.remote);
      } catch (error: unknown) {
        await daemon.stop();
        throw error;
      }
    }
    takeBack({
      stateDir: options.stateDir,
      registry: daemon.#registry,
      keeper: daemon.#keeper,
      host: daemon.#host,
      records: daemon.#records,
      log: (text) => daemon.#log(text),
    });
    loadEnded(options.stateDir, daemon.#registry);
    daemon.#peers.listen();
    daemon.#log(
      `listening on "${options.socketPath}" (state "${options.stateDir}", keeper pid ${keeper.keeperPid}, ${keeper.kept.length} session(s) taken back)`,
    );
    return daemon;
  }

  /** Stops serving; sessions go on in the keeper (or are killed with `killSessions`). */
  async stop(killSessions = false): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#log(
      killSessions ? "stopping; its sessions are killed" : "stopping; its sessions go on in the keeper",
    );
    this.#peers.stopListening();
    await this.#remote.close();
    this.#peers.closeAll();
    if (killSessions) {
      const entries = [...this.#registry.values()];
      await Promise.all(entries.map((entry) => entry.session?.terminate(0)));
      // Each end recorded and released before the keeper is left: otherwise the keeper would hold the
      // ended sessions for a next daemon that may never come (bounded: a stuck end never holds the stop).
      await within(Promise.allSettled(entries.map((entry) => entry.finished)), STOP_ENDS_MS);
    }
    for (const timer of this.#timers) clearInterval(timer);
    this.#keeper.acknowledge();
    // A session that goes on loses its network with this daemon (its relay and proxy are ours): closed,
    // never open. Their last connections are audited first.
    await Promise.all([...this.#registry.values()].map((entry) => entry.net?.close()));
    for (const entry of this.#registry.values()) {
      entry.store?.close();
      entry.audit?.log.close(); // Its session goes on: the next daemon appends to the log.
    }
    this.#keeper.close();
    for (const fd of this.#locks) closeQuietly(fd);
    this.#serviceLog.close();
    this.#resolve();
  }

  /** The TCP listener's address, when it listens. */
  get remoteUrl(): string | null {
    return this.#remote.url;
  }

  /**
   * Replaces the TCP listener (`specter daemon listen`, a token revoked): the current one closes with its
   * connections (a page reconnects, and learns whether its token still holds), then `listen` starts, or
   * none. When the new one cannot start, none listens (the error is thrown). Resolves with its address.
   */
  async relisten(listen: RemoteListen | null): Promise<string | null> {
    if (this.#stopped) throw new DaemonError("E_DAEMON_UNAVAILABLE", "The daemon is stopping");
    return await this.#remote.relisten(listen);
  }

  /** `daemon.log` in the state directory (a detached daemon's stderr is /dev/null), and the caller's log. */
  #log(text: string): void {
    this.#serviceLog.write(text);
    this.#options.log?.(text);
  }
}
