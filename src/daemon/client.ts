/**
 * A client of the daemon (what `specter new/attach/ls/send/kill` and `agent --daemon` use): connects to
 * its socket, starting the daemon first when none answers (unless autostart is off), says hello, then
 * calls methods and receives notifications (`frame`, `session.end`).
 *
 * Every attempt to connect (the first, and each one while an autostarted daemon comes up) goes through
 * {@link connectOwnSocket}: a socket that is not this user's own, or a listener of another uid, is refused
 * with `E_DAEMON_UNTRUSTED` before a byte is written. The connection is made through libc for that (its
 * descriptor is needed for `SO_PEERCRED`) and read and written on the poll reactor.
 *
 * @module
 */
import { DaemonError, ERROR_CODES, type ErrorCode, SpecterError } from "../errors.ts";
import { DriverLineSplitter } from "../frames/mod.ts";
import { DAEMON_PROTOCOL } from "../protocol/mod.ts";
import { FdStream } from "../pty/mod.ts";
import { HARD_UNSENT_BYTES } from "./connection.ts";
import { connectOwnSocket } from "./trust.ts";

/** How long a client waits for an autostarted daemon to listen. */
export const AUTOSTART_TIMEOUT_MS = 10_000;

/** Where and how to reach the daemon. */
export interface ConnectOptions {
  readonly socketPath: string;
  /** Starts a daemon (detached) when none answers; absent: `E_DAEMON_UNAVAILABLE` instead. */
  readonly start?: () => void;
}

const encoder = new TextEncoder();
/** Longest line taken from the daemon, in bytes (it never queues more than this for one client anyway). */
const MAX_LINE_BYTES = HARD_UNSENT_BYTES;
/** `EAGAIN` from connect(): the listener's backlog is full for a moment. */
const EAGAIN = 11;
/** How long a client retries a connection refused for a full backlog. */
const BACKLOG_RETRY_MS = 5000;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** One connection to the daemon. */
export class DaemonClient {
  readonly #stream: FdStream;
  /** Lines in time linear in the bytes, however they are cut. */
  readonly #splitter = new DriverLineSplitter(MAX_LINE_BYTES);
  readonly #pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  #nextId = 1;
  #closed = false;
  /** Notifications (`frame`, `session.end`). */
  onNotification: (method: string, params: Record<string, unknown>) => void = () => {};
  /** When set, every line the daemon sends goes here as it is (a proxy: `specter agent --daemon`). */
  onLine: ((line: string) => void) | null = null;
  /** Told once when the connection ends. */
  onClose: () => void = () => {};
  /** Resolves when the connection ended. */
  readonly closedPromise: Promise<void>;

  private constructor(fd: number) {
    this.#stream = new FdStream(fd);
    this.#stream.onData = (chunk) => this.#data(chunk);
    this.#stream.onClose = () => this.#ended();
    this.closedPromise = this.#stream.closed;
  }

  /**
   * Connects (autostarting when allowed) and says hello. Throws `E_DAEMON_UNTRUSTED` (the socket is not
   * this user's own: nothing was sent) or `E_DAEMON_UNAVAILABLE`.
   */
  static async connect(options: ConnectOptions): Promise<DaemonClient> {
    let fd = await tryConnect(options.socketPath);
    if (fd === null) {
      if (options.start === undefined) {
        throw new DaemonError("E_DAEMON_UNAVAILABLE", `No daemon answers on "${options.socketPath}"`, {
          details: {
            socket: options.socketPath,
            fix: "Start one with: specter daemon (or drop --no-autostart)",
          },
        });
      }
      options.start();
      const deadline = Date.now() + AUTOSTART_TIMEOUT_MS;
      while (fd === null && Date.now() < deadline) {
        await sleep(25);
        // Checked on every attempt: the place may change while the daemon comes up.
        fd = await tryConnect(options.socketPath);
      }
      if (fd === null) {
        throw new DaemonError(
          "E_DAEMON_UNAVAILABLE",
          `The daemon started did not listen on "${options.socketPath}"`,
          {
            details: { socket: options.socketPath },
          },
        );
      }
    }
    const client = new DaemonClient(fd);
    await client.call("daemon.hello", { protocol: DAEMON_PROTOCOL });
    return client;
  }

  /** Calls `method`; rejects with the daemon's typed error. */
  call(method: string, params: unknown = {}): Promise<unknown> {
    if (this.#closed) {
      return Promise.reject(
        new DaemonError("E_DAEMON_UNAVAILABLE", "The connection to the daemon is closed"),
      );
    }
    const id = this.#nextId++;
    const answer = new Promise<unknown>((resolve, reject) => this.#pending.set(id, { resolve, reject }));
    this.#send({ jsonrpc: "2.0", id, method, params });
    return answer;
  }

  /**
   * Sends raw bytes (tests speak garbage with this; `agent --daemon` passes lines through). Resolves once
   * they were written; a connection that cannot take them (closed, or the daemon reads nothing) ends.
   */
  sendRaw(bytes: Uint8Array): Promise<void> {
    return this.#stream.write(bytes).catch(() => this.close());
  }

  /** Closes the connection. */
  close(): void {
    this.#stream.close();
  }

  #send(message: unknown): void {
    void this.sendRaw(encoder.encode(JSON.stringify(message) + "\n"));
  }

  #data(chunk: Uint8Array): void {
    for (const result of this.#splitter.push(chunk)) {
      if (this.#closed) return;
      // No daemon sends a line over the cap or one that is not UTF-8 (its lines are JSON.stringify's).
      if ("error" in result) return this.close();
      this.#message(result.line);
    }
  }

  #ended(): void {
    this.#closed = true;
    for (const { reject } of this.#pending.values()) {
      reject(new DaemonError("E_DAEMON_UNAVAILABLE", "The daemon closed the connection"));
    }
    this.#pending.clear();
    this.onClose();
  }

  #message(line: string): void {
    if (this.onLine !== null) {
      this.onLine(line);
      return;
    }
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return; // Not from a daemon: ignored.
    }
    if (typeof message.method === "string") {
      this.onNotification(message.method, (message.params ?? {}) as Record<string, unknown>);
      return;
    }
    const waiter = typeof message.id === "number" ? this.#pending.get(message.id) : undefined;
    if (waiter === undefined) {
      if (message.error !== undefined) {
        // A refusal without an id (garbage, a peer of another uid): fail every call.
        for (const { reject } of this.#pending.values()) reject(errorOf(message.error));
        this.#pending.clear();
      }
      return;
    }
    this.#pending.delete(message.id as number);
    if (message.error !== undefined) waiter.reject(errorOf(message.error));
    else waiter.resolve(message.result);
  }
}

function errorOf(error: unknown): SpecterError {
  const e = (error ?? {}) as { message?: unknown; data?: { code?: unknown; details?: unknown } };
  const code = typeof e.data?.code === "string" && Object.hasOwn(ERROR_CODES, e.data.code)
    ? e.data.code as ErrorCode
    : "E_DAEMON_UNAVAILABLE";
  const details =
    (typeof e.data?.details === "object" && e.data.details !== null ? e.data.details : {}) as Record<
      string,
      string
    >;
  return new SpecterError(code, typeof e.message === "string" ? e.message : "The daemon refused the call", {
    details,
  });
}

/**
 * One attempt: the connected descriptor, or null when nobody listens there. `E_DAEMON_UNTRUSTED` is
 * thrown (never retried, never autostarted over); a full backlog is waited out.
 */
async function tryConnect(path: string): Promise<number | null> {
  const deadline = Date.now() + BACKLOG_RETRY_MS;
  for (;;) {
    try {
      return connectOwnSocket(path, "stream");
    } catch (error: unknown) {
      if (error instanceof SpecterError && error.code === "E_DAEMON_UNTRUSTED") throw error;
      const busy = error instanceof SpecterError && error.details.errno === EAGAIN;
      if (!busy || Date.now() > deadline) return null; // Unreachable: as if none listened.
      await sleep(10);
    }
  }
}
