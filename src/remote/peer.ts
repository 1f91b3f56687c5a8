/**
 * A client of the daemon, whatever carries it (the unix socket, a WebSocket): what the daemon sends it,
 * how it is dropped, and what it may do.
 *
 * @module
 */

/** What a client may do: the unix socket's peers everything; remote ones what their token grants. */
export interface Access {
  readonly scope: "local" | "viewer" | "control";
  /** The only sessions it may see (and, with control, start or drive); null: all. */
  readonly sessions: ReadonlySet<string> | null;
  /** How logs and the audit name the client's credential (never the token itself). */
  readonly label: string;
}

/** Everything, as a peer of the unix socket has it (its uid was checked by the kernel). */
export const LOCAL_ACCESS: Access = { scope: "local", sessions: null, label: "unix socket" };

/** What a peer tells its owner. */
export interface PeerHost {
  /** A complete line (or a line error: too long, not UTF-8, not text). */
  line(peer: Peer, line: string | Error): void | Promise<void>;
  /** The peer is gone (disconnected, dropped, refused, closed); called once. */
  closed(peer: Peer, reason: string): void;
}

/** A connected client. */
export interface Peer {
  /** For logs: `pid 1234` or `203.0.113.7:51234`. */
  readonly name: string;
  readonly access: Access;
  /** The sessions it attached to, drove or asked about (for the audit log). */
  readonly touched: Set<string>;
  /** Set by the daemon: the protocol version was agreed (`daemon.hello`). */
  greeted: boolean;
  /** Set by the daemon once the peer speaks the agent tools (`agent.open`): where its lines go. */
  agentInput: ReadableStreamDefaultController<Uint8Array> | null;
  readonly closed: boolean;
  /** Bytes queued for the client. */
  readonly unsent: number;
  /** Queues one JSON message. Drops a client that does not read. */
  send(message: unknown): void;
  /** Queues bytes as they are (whole NDJSON lines). */
  sendBytes(bytes: Uint8Array): void;
  /** Drops a client that took nothing for a while although bytes wait for it. */
  checkStall(): void;
  /** Sends what is queued, then ends the connection. */
  closeAfterSending(): void;
  /** Closes at once. */
  close(reason?: string): void;
  /** After the answer to `daemon.hello`: the client's messages are compressed from now on (WebSocket). */
  compress(on: boolean): void;
}
