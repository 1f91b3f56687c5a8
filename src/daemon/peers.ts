/**
 * Connections and peers: the daemon's unix socket listener (peers of another uid refused, by
 * `SO_PEERCRED`), every connected client (unix socket `Connection`s and the TCP listener's `WsPeer`s
 * alike, as `Peer`s), how one is refused, dropped when it stalls, and forgotten when it goes.
 *
 * @module
 */
import { DaemonError, type SpecterError } from "../errors.ts";
import { JSONRPC_ERRORS } from "../protocol/mod.ts";
import {
  acceptUnix,
  closeQuietly,
  libc,
  listenUnix,
  peerCredentials,
  type PollClient,
  reactor,
} from "../pty/mod.ts";
import type { Peer, PeerHost } from "../remote/mod.ts";
import { Connection } from "./connection.ts";
import type { Registry } from "./registry.ts";
import type { DaemonLog } from "./options.ts";

/** Listens on `socketPath` (mode 0600; a stale socket there must have been removed): the listener. */
export function listenOn(socketPath: string): number {
  const listener = listenUnix(socketPath, "stream");
  Deno.chmodSync(socketPath, 0o600);
  return listener;
}

/** The daemon's clients, and the unix socket they connect to. */
export class Peers {
  readonly #connections = new Set<Peer>();
  readonly #listener: number;
  readonly #listenClient: PollClient;
  readonly #socketPath: string;
  readonly #registry: Registry;
  readonly #line: PeerHost["line"];
  readonly #log: DaemonLog;

  /**
   * The clients of `listener`, the unix socket listening at `socketPath` (see {@link listenOn}); accepting
   * starts with {@link listen}. Each complete line of a client goes to `line`.
   */
  constructor(
    listener: number,
    socketPath: string,
    registry: Registry,
    line: PeerHost["line"],
    log: DaemonLog,
  ) {
    this.#listener = listener;
    this.#socketPath = socketPath;
    this.#registry = registry;
    this.#line = line;
    this.#log = log;
    this.#listenClient = {
      fd: this.#listener,
      interest: () => libc().table.poll.POLLIN,
      ready: () => this.#accept(),
      fail: (error) => this.#log(`listener failed: ${String(error)}`),
    };
  }

  /** Starts accepting clients on the unix socket. */
  listen(): void {
    reactor().add(this.#listenClient);
  }

  /** Stops accepting clients (those connected stay until {@link closeAll}). */
  stopListening(): void {
    reactor().remove(this.#listenClient);
    closeQuietly(this.#listener);
  }

  /** Removes the socket and closes every connection. */
  closeAll(): void {
    try {
      Deno.removeSync(this.#socketPath);
    } catch {
      // Removed by someone else.
    }
    for (const connection of this.#connections) connection.close();
  }

  /** A client the TCP listener accepted. */
  add(peer: Peer): void {
    this.#connections.add(peer);
  }

  /** Drops a client that stopped reading, even when nothing more is sent to it. */
  checkStalls(): void {
    for (const connection of this.#connections) connection.checkStall();
  }

  /** A client is gone (called once per client, by its connection). */
  closed(connection: Peer, reason: string): void {
    this.#connections.delete(connection);
    try {
      connection.agentInput?.close();
    } catch {
      // Closed already.
    }
    this.#registry.forget(connection);
    if (reason.startsWith("dropped")) this.#log(`client ${connection.name} ${reason}`);
  }

  /** Answers request `id` with `error`, then closes the connection. */
  refuse(connection: Peer, id: string | number | null, error: SpecterError): void {
    connection.send({
      jsonrpc: "2.0",
      id,
      error: { code: JSONRPC_ERRORS.SERVER_ERROR, message: error.message, data: error.toJSON() },
    });
    connection.closeAfterSending();
  }

  #accept(): void {
    for (;;) {
      let fd: number | null;
      try {
        fd = acceptUnix(this.#listener);
      } catch (error: unknown) {
        this.#log(`accept failed: ${String(error)}`);
        return;
      }
      if (fd === null) return;
      let peer;
      try {
        peer = peerCredentials(fd);
      } catch {
        closeQuietly(fd);
        continue;
      }
      const connection = new Connection(fd, peer.pid, {
        line: (c, line) => void this.#line(c, line),
        closed: (c, reason) => this.closed(c, reason),
      });
      this.#connections.add(connection);
      if (peer.uid !== Deno.uid()) {
        this.#log(`refused pid ${peer.pid}: uid ${peer.uid} is not ${Deno.uid()}`);
        this.refuse(
          connection,
          null,
          new DaemonError("E_DAEMON_PEER", `Peers of uid ${peer.uid} are refused`),
        );
      }
    }
  }
}
