/**
 * One program connection through the proxy, from its accept to its one {@link NetEvent}: read the head
 * (capped, timed), parse it, decide with the allow list, resolve and check the address, connect, answer,
 * pipe. Every failure ends this connection only: {@link ProxyConnection.serve} never rejects.
 *
 * @module
 */
import { nowSeconds, within } from "../clock.ts";
import { matchNetRule, type NetRule } from "../policy/mod.ts";
import type { NetEvent } from "../protocol/mod.ts";
import { dialChecked, type Resolver } from "./dial.ts";
import { forwardedHead, latin1Bytes } from "./http_forward.ts";
import { MAX_HEAD_BYTES, parseProxyHead } from "./proxy_head.ts";
import {
  CONNECT_ESTABLISHED,
  notAllowedMessage,
  type ProxyError,
  refusalResponse,
  refusedAddressMessage,
} from "./proxy_response.ts";
import { readProxyHead } from "./read_head.ts";
import { closeQuietly, tunnel, type TunnelCounts, writeAll } from "./tunnel.ts";

/** What every connection of one proxy shares. */
export interface ConnectionContext {
  readonly rules: readonly NetRule[];
  readonly policyName: string;
  readonly resolve: Resolver;
  readonly headTimeoutMs: number;
}

/** How long a refusal's few hundred bytes may take to be written (a client that reads nothing). */
const RESPONSE_WRITE_MS = 2_000;

/** One accepted connection. */
export class ProxyConnection {
  readonly #client: Deno.Conn;
  readonly #context: ConnectionContext;
  readonly #started = performance.now();
  #server: Deno.Conn | null = null;
  #stopped = false;
  #stop!: () => void;
  readonly #stopSignal = new Promise<void>((resolve) => this.#stop = resolve);
  readonly #counts: TunnelCounts = { up: 0, down: 0 };
  #decision: NetEvent["decision"] = "refused";
  #method = "";
  #host = "";
  #port = 0;
  #rule: string | null = null;
  #reason: string | null = null;
  #address: string | null = null;

  constructor(client: Deno.Conn, context: ConnectionContext) {
    this.#client = client;
    this.#context = context;
  }

  /** Ends the connection now (the proxy is closing); {@link serve} then resolves with its event. */
  stop(): void {
    this.#stopped = true;
    this.#stop();
    closeQuietly(this.#client);
    closeQuietly(this.#server);
  }

  /** Refuses the connection at once (`reason`), e.g. over the proxy's connection limit. Never rejects. */
  async refuse(status: number, error: ProxyError, reason: string, message: string): Promise<NetEvent> {
    this.#reason = reason;
    await this.#respond(status, error, message);
    return this.#finish();
  }

  /** Serves the connection to its end and returns its event. Never rejects. */
  async serve(): Promise<NetEvent> {
    try {
      await this.#serve();
    } catch (error: unknown) {
      // Anything not foreseen still ends only this connection, with its reason in the event (a write that
      // failed because close() closed the connection is the proxy stopping, said in #finish).
      if (!this.#stopped) {
        this.#reason ??= `the connection failed: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
    return this.#finish();
  }

  async #serve(): Promise<void> {
    const { rules, policyName, headTimeoutMs } = this.#context;
    const read = await readProxyHead(this.#client, headTimeoutMs, this.#stopSignal);
    switch (read.kind) {
      case "timeout":
        this.#reason = `no whole request head within ${headTimeoutMs} ms`;
        return await this.#respond(
          408,
          "head-timeout",
          `Request head not received within ${headTimeoutMs} ms`,
        );
      case "too_large":
        this.#reason = `a request head over ${MAX_HEAD_BYTES} bytes`;
        return await this.#respond(431, "head-too-large", `Request head over ${MAX_HEAD_BYTES} bytes`);
      case "closed":
        this.#reason = read.bytes === 0
          ? "closed without a request"
          : "closed before the end of its request head";
        return;
      case "stopped":
        return;
      case "failed":
        this.#reason = `reading the request failed: ${read.message}`;
        return;
    }
    const parsed = parseProxyHead(read.head);
    if (!parsed.ok) {
      this.#method = parsed.method;
      this.#reason = `a bad request: ${parsed.reason}`;
      return await this.#respond(400, "bad-request", `Bad request: ${parsed.reason}`);
    }
    const request = parsed.request;
    this.#method = request.method;
    this.#host = request.host;
    this.#port = request.port;
    const rule = matchNetRule(rules, request.host, request.port);
    if (rule === null) {
      this.#reason = "no rule allows it";
      const body = notAllowedMessage(policyName, request.host, request.port, rules);
      return await this.#respond(403, "blocked-by-allowlist", body);
    }
    this.#rule = rule.text;
    const dialled = await dialChecked(
      rule,
      request.host,
      request.hostKind,
      request.port,
      this.#context.resolve,
      this.#stopSignal,
    );
    if (!dialled.ok) {
      this.#address = dialled.address;
      this.#reason = dialled.reason;
      if (dialled.kind === "address") {
        const body = refusedAddressMessage(policyName, request.host, request.port, rule, dialled.addresses);
        return await this.#respond(403, "blocked-by-address", body);
      }
      // The policy allowed it; the network did not (a name that does not resolve, a closed port).
      this.#decision = "allowed";
      if (dialled.kind === "stopped") return;
      const error = dialled.kind === "resolve" ? "resolve-failed" : "connect-failed";
      return await this.#respond(502, error, `Bad gateway: ${dialled.reason}`);
    }
    this.#decision = "allowed";
    this.#address = dialled.address;
    this.#server = dialled.conn;
    if (this.#stopped) return; // close() came while connecting: the new connection is closed in #finish.
    try {
      dialled.conn.setNoDelay(true);
    } catch {
      // Only latency: the tunnel works without it.
    }
    let http: { upLimit: number | null } | null = null;
    if (request.kind === "connect") {
      await writeAll(this.#client, CONNECT_ESTABLISHED);
      await this.#sendUp(read.rest);
    } else {
      // One request: its head, then its body and nothing after it (a pipelined request is dropped).
      const length = request.bodyLength;
      const first = length === null ? read.rest : read.rest.subarray(0, length);
      await this.#sendUp(latin1Bytes(forwardedHead(request)));
      await this.#sendUp(first);
      http = { upLimit: length === null ? null : length - first.length };
    }
    const failure = await tunnel(this.#client, dialled.conn, this.#counts, http);
    if (failure !== null && !this.#stopped) this.#reason = `the connection failed: ${failure}`;
  }

  async #sendUp(bytes: Uint8Array): Promise<void> {
    if (bytes.length === 0) return;
    await writeAll(this.#server!, bytes);
    this.#counts.up += bytes.length;
  }

  /** Writes a refusal, within a bound (a client that reads nothing is not waited for). */
  async #respond(status: number, error: ProxyError, message: string): Promise<void> {
    try {
      await within(writeAll(this.#client, refusalResponse(status, error, message)), RESPONSE_WRITE_MS);
    } catch {
      // The client went away before its answer: the event still records the refusal.
    }
  }

  #finish(): NetEvent {
    closeQuietly(this.#client);
    closeQuietly(this.#server);
    if (this.#stopped) this.#reason ??= "the proxy stopped";
    return {
      ts: nowSeconds(),
      event: "net",
      decision: this.#decision,
      method: this.#method,
      host: this.#host,
      port: this.#port,
      rule: this.#rule,
      reason: this.#reason,
      address: this.#address,
      bytes_up: this.#counts.up,
      bytes_down: this.#counts.down,
      duration_ms: Math.round((performance.now() - this.#started) * 1000) / 1000,
    };
  }
}
