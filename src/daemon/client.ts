/**
 * A client of the daemon (what `specter new/attach/ls/send/kill` use): connects to its socket, starting
 * the daemon first when none answers (unless autostart is off), says hello, then calls methods and
 * receives notifications (`frame`, `session.end`).
 *
 * @module
 */
import { DaemonError, ERROR_CODES, type ErrorCode, SpecterError } from "../errors.ts";
import { DAEMON_PROTOCOL } from "../protocol/mod.ts";

/** How long a client waits for an autostarted daemon to listen. */
export const AUTOSTART_TIMEOUT_MS = 10_000;

/** Where and how to reach the daemon. */
export interface ConnectOptions {
  readonly socketPath: string;
  /** Starts a daemon (detached) when none answers; absent: `E_DAEMON_UNAVAILABLE` instead. */
  readonly start?: () => void;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** One connection to the daemon. */
export class DaemonClient {
  readonly #conn: Deno.UnixConn;
  readonly #pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  #nextId = 1;
  #closed = false;
  #writing = Promise.resolve();
  /** Notifications (`frame`, `session.end`). */
  onNotification: (method: string, params: Record<string, unknown>) => void = () => {};
  /** When set, every line the daemon sends goes here as it is (a proxy: `specter agent --daemon`). */
  onLine: ((line: string) => void) | null = null;
  /** Told once when the connection ends. */
  onClose: () => void = () => {};
  /** Resolves when the connection ended. */
  readonly closedPromise: Promise<void>;

  private constructor(conn: Deno.UnixConn) {
    this.#conn = conn;
    this.closedPromise = this.#read();
  }

  /** Connects (autostarting when allowed) and says hello. Throws `E_DAEMON_UNAVAILABLE`. */
  static async connect(options: ConnectOptions): Promise<DaemonClient> {
    let conn = await tryConnect(options.socketPath);
    if (conn === null) {
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
      while (conn === null && Date.now() < deadline) {
        await sleep(25);
        conn = await tryConnect(options.socketPath);
      }
      if (conn === null) {
        throw new DaemonError(
          "E_DAEMON_UNAVAILABLE",
          `The daemon started did not listen on "${options.socketPath}"`,
          {
            details: { socket: options.socketPath },
          },
        );
      }
    }
    const client = new DaemonClient(conn);
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

  /** Sends raw bytes (tests speak garbage with this). */
  sendRaw(bytes: Uint8Array): Promise<void> {
    this.#writing = this.#writing.then(() => writeAll(this.#conn, bytes)).catch(() => {});
    return this.#writing;
  }

  /** Closes the connection. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#conn.close();
    } catch {
      // Closed by the reader already.
    }
  }

  #send(message: unknown): void {
    void this.sendRaw(encoder.encode(JSON.stringify(message) + "\n"));
  }

  async #read(): Promise<void> {
    let carry = "";
    const buffer = new Uint8Array(64 * 1024);
    try {
      for (;;) {
        const n = await this.#conn.read(buffer);
        if (n === null) break;
        carry += decoder.decode(buffer.subarray(0, n), { stream: true });
        let nl: number;
        while ((nl = carry.indexOf("\n")) >= 0) {
          const line = carry.slice(0, nl);
          carry = carry.slice(nl + 1);
          this.#message(line);
        }
      }
    } catch {
      // Reset or closed: the same as the end.
    } finally {
      this.#closed = true;
      try {
        this.#conn.close();
      } catch {
        // Already closed.
      }
      for (const { reject } of this.#pending.values()) {
        reject(new DaemonError("E_DAEMON_UNAVAILABLE", "The daemon closed the connection"));
      }
      this.#pending.clear();
      this.onClose();
    }
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
  const code = typeof e.data?.code === "string" && e.data.code in ERROR_CODES
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

async function tryConnect(path: string): Promise<Deno.UnixConn | null> {
  try {
    return await Deno.connect({ transport: "unix", path });
  } catch {
    return null; // No socket, or a stale one nobody listens on.
  }
}

async function writeAll(conn: Deno.UnixConn, bytes: Uint8Array): Promise<void> {
  let done = 0;
  while (done < bytes.length) done += await conn.write(bytes.subarray(done));
}
