/**
 * The network proxy of an allow-list policy (issue 26): an HTTP proxy on a unix socket in the run's private
 * directory, which the relay inside the sandbox's network namespace pipes each TCP connection of
 * 127.0.0.1:3128 to. It runs in the supervising process (outside the sandbox), so the names it resolves,
 * the addresses it checks and the connections it makes are its own; the sandbox has only loopback.
 *
 * Bounded against a hostile program: {@link NetProxyOptions.maxConnections} at once (beyond: 503),
 * {@link NetProxyOptions.maxTotalConnections} over its life (each connection is one audit record: a program
 * that connects in a loop would otherwise grow its run's audit log without end; beyond: closed unanswered,
 * counted, and the count is one last event at close), a
 * 16 KiB head read within {@link NetProxyOptions.headTimeoutMs}, two 1 MiB buffers per direction of a
 * tunnel. A connection's failure ends that connection only; nothing a client sends throws out of the
 * proxy or rejects unhandled. Each connection is one {@link NetEvent}, at its close (a refusal at once).
 *
 * @module
 */
import { nowSeconds } from "../clock.ts";
import { SandboxError, UsageError } from "../errors.ts";
import type { NetRule } from "../policy/mod.ts";
import type { NetEvent } from "../protocol/mod.ts";
import { type ConnectionContext, ProxyConnection } from "./_connection.ts";
import { systemResolve } from "./dial.ts";
import { HEAD_TIMEOUT_MS } from "./proxy_head.ts";

/** Connections one proxy serves at once by default. */
export const DEFAULT_MAX_CONNECTIONS = 64;

/**
 * Connections one proxy takes over its life by default: each is an audit record of about 330 bytes, so
 * the run's audit log stays near 33 MB of them, within the 64 MiB that `audit verify` and a resuming
 * daemon read.
 */
export const DEFAULT_MAX_TOTAL_CONNECTIONS = 100_000;

/** How a proxy is started. */
export interface NetProxyOptions {
  /** Where to listen (a unix socket the proxy creates; its directory is the caller's, mode 0700). */
  socketPath: string;
  /** The allow list. */
  rules: readonly NetRule[];
  /** The policy's name, for refusals ("preset:…", "file:…"). */
  policyName: string;
  /** Called once per connection at its close (a refusal at once). An exception from it is swallowed. */
  onEvent: (event: NetEvent) => void;
  /** Resolves a name (default: getaddrinfo through `node:dns` `lookup`, so /etc/hosts counts). */
  resolve?: (host: string) => Promise<string[]>;
  /** Connections at once (default {@link DEFAULT_MAX_CONNECTIONS}); beyond it a client gets 503. */
  maxConnections?: number;
  /** How long a client may take to send its request head (default 10 s). */
  headTimeoutMs?: number;
  /**
   * Connections over the proxy's life (default {@link DEFAULT_MAX_TOTAL_CONNECTIONS}): the one past it gets
   * 503, later ones are closed unanswered and counted in one event at close.
   */
  maxTotalConnections?: number;
}

/** A running proxy. */
export class NetProxy {
  /** The unix socket it listens on. */
  readonly socketPath: string;
  /** The unix socket's listener, and any a caller handed over ({@link serveListener}). */
  readonly #listeners: Deno.Listener[] = [];
  readonly #context: ConnectionContext;
  readonly #onEvent: (event: NetEvent) => void;
  readonly #max: number;
  readonly #maxTotal: number;
  /** Connections taken so far (each has, or will have, its own event). */
  #taken = 0;
  /** Connections closed unanswered past {@link #maxTotal}: one event at close counts them. */
  #untaken = 0;
  /** Connections being served (counted against the limit). */
  readonly #open = new Set<ProxyConnection>();
  /** Every connection, refused ones too: close() stops them all. */
  readonly #all = new Set<ProxyConnection>();
  /** Every connection's task: close() waits for all of them. */
  readonly #tasks = new Set<Promise<void>>();
  readonly #accepting: Promise<void>[] = [];
  #closing: Promise<void> | null = null;

  private constructor(
    listener: Deno.Listener,
    options: NetProxyOptions,
    max: number,
    maxTotal: number,
    headTimeoutMs: number,
  ) {
    this.socketPath = options.socketPath;
    this.#onEvent = options.onEvent;
    this.#max = max;
    this.#maxTotal = maxTotal;
    this.#context = {
      rules: options.rules,
      policyName: options.policyName,
      resolve: options.resolve ?? systemResolve,
      headTimeoutMs,
    };
    this.serveListener(listener);
  }

  /**
   * Also serves the connections of `listener` (the TCP listener the launch made inside a sandbox's network
   * namespace when this process may enter it: no relay process, one hop less), until {@link close}, which
   * closes it. After close, it is closed at once.
   */
  serveListener(listener: Deno.Listener): void {
    if (this.#closing !== null) {
      try {
        listener.close();
      } catch {
        // Already closed.
      }
      return;
    }
    this.#listeners.push(listener);
    this.#accepting.push(this.#accept(listener));
  }

  /**
   * Listens on `options.socketPath` and serves until {@link close}. Throws `E_USAGE` for a bad limit and
   * `E_SANDBOX_START` when the socket cannot be made (the path exists, the directory is missing): a run
   * with an allow list never starts without its proxy.
   */
  static start(options: NetProxyOptions): Promise<NetProxy> {
    const max = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
    const maxTotal = options.maxTotalConnections ?? DEFAULT_MAX_TOTAL_CONNECTIONS;
    const headTimeoutMs = options.headTimeoutMs ?? HEAD_TIMEOUT_MS;
    if (!Number.isInteger(max) || max < 1) {
      return Promise.reject(new UsageError(`maxConnections must be a positive integer, got "${max}"`));
    }
    if (!Number.isInteger(maxTotal) || maxTotal < 1) {
      return Promise.reject(
        new UsageError(`maxTotalConnections must be a positive integer, got "${maxTotal}"`),
      );
    }
    if (!Number.isFinite(headTimeoutMs) || headTimeoutMs <= 0) {
      return Promise.reject(
        new UsageError(`headTimeoutMs must be a positive number, got "${headTimeoutMs}"`),
      );
    }
    let listener: Deno.Listener;
    try {
      listener = Deno.listen({ transport: "unix", path: options.socketPath });
    } catch (error: unknown) {
      return Promise.reject(
        new SandboxError(
          "E_SANDBOX_START",
          `The network proxy cannot listen on "${options.socketPath}": ${(error as Error).message}`,
          { cause: error, details: { path: options.socketPath } },
        ),
      );
    }
    return Promise.resolve(new NetProxy(listener, options, max, maxTotal, headTimeoutMs));
  }

  /** Connections being served now. */
  get connections(): number {
    return this.#open.size;
  }

  async #accept(listener: Deno.Listener): Promise<void> {
    for (;;) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
      } catch (error: unknown) {
        if (this.#closing !== null || error instanceof Deno.errors.BadResource) return;
        // A passing failure (out of descriptors): wait a little rather than spin, then accept again.
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      if (this.#closing !== null) {
        conn.close();
        return;
      }
      if (this.#taken > this.#maxTotal) {
        // Past the run's limit (told to the connection that met it): no answer, no record each, a count.
        this.#untaken++;
        conn.close();
        continue;
      }
      this.#taken++;
      this.#track(this.#serve(conn, this.#taken > this.#maxTotal));
    }
  }

  #track(task: Promise<void>): void {
    this.#tasks.add(task);
    // #serve does not reject (serve and refuse never do, #emit catches); the catch is there so that a bug
    // there could never become an unhandled rejection, which would end the supervising process.
    task.catch(() => {}).finally(() => this.#tasks.delete(task));
  }

  async #serve(conn: Deno.Conn, pastTotal: boolean): Promise<void> {
    const connection = new ProxyConnection(conn, this.#context);
    this.#all.add(connection);
    try {
      if (pastTotal) {
        const reason = `the run's limit of ${this.#maxTotal} connections`;
        const message = `Too many connections through Specter's network proxy (at most ${this.#maxTotal} ` +
          `connections per run): this one and every later one are refused`;
        this.#emit(await connection.refuse(503, "too-many-connections", reason, message));
        return;
      }
      if (this.#open.size >= this.#max) {
        const reason = "too many connections";
        const message = `Too many connections through Specter's network proxy (at most ${this.#max} at once)`;
        this.#emit(await connection.refuse(503, "too-many-connections", reason, message));
        return;
      }
      this.#open.add(connection);
      this.#emit(await connection.serve());
    } finally {
      this.#open.delete(connection);
      this.#all.delete(connection);
    }
  }

  #emit(event: NetEvent): void {
    try {
      this.#onEvent(event);
    } catch {
      // The caller's handler failed (its bug, not the program's): the proxy serves on regardless.
    }
  }

  /**
   * Stops listening, ends every connection, removes the socket, and resolves once every connection's
   * event was emitted. Idempotent; never rejects.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    for (const listener of this.#listeners) {
      try {
        listener.close();
      } catch {
        // Already closed.
      }
    }
    await Promise.all(this.#accepting);
    for (const connection of this.#all) connection.stop();
    while (this.#tasks.size > 0) await Promise.allSettled([...this.#tasks]);
    if (this.#untaken > 0) {
      this.#emit({
        ts: nowSeconds(),
        event: "net",
        decision: "refused",
        method: "",
        host: "",
        port: 0,
        rule: null,
        reason: `${this.#untaken} later connection(s) closed unanswered past the run's limit of ` +
          `${this.#maxTotal} connections`,
        address: null,
        bytes_up: 0,
        bytes_down: 0,
        duration_ms: 0,
      });
    }
    try {
      Deno.removeSync(this.socketPath);
    } catch {
      // Gone already (removed by the caller with its directory): nothing to clean.
    }
  }
}
