/**
 * The daemon's TCP listener (`specter daemon --bind`): HTTP(S) with the web viewer's pages and assets, and
 * the daemon's JSON-RPC on a WebSocket at `/v1/ws`. The listener accepts connections itself (not through
 * `Deno.serve`), so that every bound is its own: at most {@link MAX_CONNECTIONS} connections (and
 * {@link MAX_PER_ADDRESS} per address), a request head within 10 s, one request per connection, a full
 * descriptor table backed off from instead of ending the daemon.
 *
 * Every request is first held against the Host allow-list and the Origin rule (`guard.ts`); the WebSocket
 * then needs a token (`Authorization: Bearer`, or a `specter.token.<token>` subprotocol from a browser),
 * compared in constant time, with failed attempts limited per address. Only a real WebSocket handshake
 * that carries a wrong token counts as a failed attempt (a browser makes such a handshake only through its
 * WebSocket API, which always sends Origin: another site's page cannot lock its user out). The pages need
 * no token (they hold no secret; the page takes its token from the URL's fragment, which no request
 * carries). Nothing is printed to stdout; connections and refusals go to the audit log, never a token.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { AuditLog } from "../artifacts/mod.ts";
import {
  MCP_PATH,
  type RemoteRefusal,
  TOKEN_PATH,
  WS_PATH,
  WS_SUBPROTOCOL,
  WS_TOKEN_PREFIX,
} from "../protocol/mod.ts";
import type { Asset } from "./assets.ts";
import { RemoteError } from "./errors.ts";
import { allowedHosts, guardRequest, isLoopback } from "./guard.ts";
import { encodeResponse, readHead, type RequestHead, writeAll } from "./http_head.ts";
import { FailureLimiter } from "./limiter.ts";
import { checkToken } from "./token_check.ts";
import { AUTHENTICATE, refusal, type Reply, SECURITY_HEADERS } from "./reply.ts";
import { type HttpHandler, type RouteContext, serveRoute } from "./http_route.ts";
import type { Peer, PeerHost } from "./peer.ts";
import type { Grant, TokenSet } from "./tokens.ts";
import { WsPeer } from "./ws_peer.ts";

/** Remote clients at once, by default. */
export const DEFAULT_MAX_CLIENTS = 64;
/** Open TCP connections at most (pages, handshakes, WebSockets). */
export const MAX_CONNECTIONS = 256;
/** Open TCP connections from one address at most. */
export const MAX_PER_ADDRESS = 96;
/** New WebSocket connections one address may open per minute (each is audited). */
export const CONNECTS_PER_MINUTE = 60;
/** Bytes waiting for all remote clients together, beyond which the one with the most is dropped. */
export const TOTAL_UNSENT = 128 * 1024 * 1024;
/** Refusals recorded in the audit log per minute at most (the rest are counted in the next one). */
const REFUSALS_PER_MINUTE = 100;
const WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/** How the listener runs. */
export interface RemoteServerOptions {
  readonly hostname: string;
  /** 0: any free port. */
  readonly port: number;
  /** PEM certificate chain and key: HTTPS and WSS. */
  readonly tls: { readonly cert: string; readonly key: string } | null;
  /** Listening on a non-loopback address without TLS was acknowledged (`--insecure-bind`). */
  readonly insecure: boolean;
  readonly tokens: TokenSet;
  /** More names the listener answers to (`--allow-host`, e.g. behind a proxy). */
  readonly allowHosts?: readonly string[];
  readonly maxClients?: number;
  /** Whether clients may ask for zstd-compressed messages. */
  readonly compress: "zstd" | "none";
  /** Where connections and refusals are recorded. */
  readonly audit: AuditLog | null;
  /** The daemon's log (never given a token). */
  readonly log: (text: string) => void;
  /** The daemon's side of every peer. */
  readonly host: PeerHost;
  /** A peer was let in. */
  readonly accepted: (peer: WsPeer) => void;
  /** Serves `/mcp` (MCP's Streamable HTTP) for a control token given every session; none: 404. */
  readonly mcp?: HttpHandler;
}

/** The listener. */
export class RemoteServer {
  readonly #options: RemoteServerOptions;
  readonly #listener: Deno.Listener;
  /** The accept loop: it ends once the listener is closed (and its port free again). */
  #accepting: Promise<void> = Promise.resolve();
  readonly #hosts: Set<string>;
  readonly #limiter = new FailureLimiter();
  readonly #peers = new Set<WsPeer>();
  readonly #open = new Map<string, number>();
  readonly #connects = new Map<string, number[]>();
  readonly #conns = new Set<Deno.Conn>();
  readonly #budget: ReturnType<typeof setInterval>;
  #refusals = { minute: 0, recorded: 0, suppressed: 0 };
  #pages: Readonly<Record<string, Asset>> = {};
  #assets: Readonly<Record<string, Asset>> = {};
  #closing = false;
  /** The viewer's address (no token). */
  readonly url: string;

  private constructor(options: RemoteServerOptions, listener: Deno.Listener) {
    this.#options = options;
    this.#listener = listener;
    const port = (listener.addr as Deno.NetAddr).port;
    this.#hosts = allowedHosts(options.hostname, port, options.allowHosts ?? []);
    const host = options.hostname.includes(":") ? `[${options.hostname}]` : options.hostname;
    this.url = `${options.tls === null ? "http" : "https"}://${host}:${port}/`;
    // All remote clients together: the one with the most waiting goes first.
    this.#budget = setInterval(() => this.#holdBudget(), 250);
  }

  /**
   * Listens (`E_REMOTE_BIND` when it cannot: a non-loopback address without TLS or `insecure`, the address
   * in use, a bad certificate).
   */
  static async start(options: RemoteServerOptions): Promise<RemoteServer> {
    if (!isLoopback(options.hostname) && options.tls === null && !options.insecure) {
      throw new RemoteError(
        "E_REMOTE_BIND",
        `Listening on "${options.hostname}" (not a loopback address) needs TLS (--tls-cert and --tls-key), ` +
          "or --insecure-bind to send tokens and terminals in clear text",
        { details: { hostname: options.hostname } },
      );
    }
    // The pages and libraries (about 1 MB of text) load only for a daemon that listens on TCP.
    const { ASSETS, PAGES } = await import("./assets.ts");
    let listener: Deno.Listener;
    try {
      listener = options.tls === null
        ? Deno.listen({ hostname: options.hostname, port: options.port })
        : Deno.listenTls({
          hostname: options.hostname,
          port: options.port,
          cert: options.tls.cert,
          key: options.tls.key,
        });
    } catch (error: unknown) {
      throw new RemoteError(
        "E_REMOTE_BIND",
        `Cannot listen on "${options.hostname}:${options.port}": ${(error as Error).message}`,
        { cause: error, details: { hostname: options.hostname, port: options.port } },
      );
    }
    const self = new RemoteServer(options, listener);
    self.#pages = PAGES;
    self.#assets = ASSETS;
    self.#accepting = self.#acceptLoop();
    options.audit?.record("listen", {
      url: self.url,
      tls: options.tls !== null,
      insecure_bind: options.insecure,
      compress: options.compress,
      max_clients: options.maxClients ?? DEFAULT_MAX_CLIENTS,
      allow_hosts: [...self.#hosts].sort(),
    });
    if (options.insecure && options.tls === null && !isLoopback(options.hostname)) {
      options.log(
        `remote: WARNING: listening on ${self.url} without TLS (--insecure-bind): tokens and terminals ` +
          "cross the network in clear text",
      );
    }
    return self;
  }

  /** Remote clients connected now. */
  get clients(): number {
    return this.#peers.size;
  }

  /** Stops listening and closes every remote client. */
  close(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#budget);
    try {
      this.#listener.close();
    } catch {
      // Closed already.
    }
    for (const peer of this.#peers) peer.close("the daemon stops");
    for (const conn of this.#conns) closeConn(conn);
    // The socket is released when the pending accept ends: a listener started next on the same port
    // (specter daemon listen, revoke) waits for that.
    return this.#accepting;
  }

  async #acceptLoop(): Promise<void> {
    let warned = 0;
    while (!this.#closing) {
      let conn: Deno.Conn;
      try {
        conn = await this.#listener.accept();
      } catch (error: unknown) {
        if (this.#closing || error instanceof Deno.errors.BadResource) return;
        // Out of descriptors (EMFILE), or a failed TLS accept: back off, never end the daemon.
        if (performance.now() - warned > 10_000) {
          warned = performance.now();
          this.#options.log(`remote: accepting failed (${(error as Error).message}); backing off`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      if (this.#closing) {
        closeConn(conn); // Accepted as the listener closed: refused, never served with the old tokens.
        return;
      }
      const address = (conn.remoteAddr as Deno.NetAddr).hostname;
      const open = this.#open.get(address) ?? 0;
      if (this.#conns.size >= MAX_CONNECTIONS || open >= MAX_PER_ADDRESS) {
        closeConn(conn); // Before anything is read: a flood of idle connections costs nothing more.
        continue;
      }
      this.#open.set(address, open + 1);
      this.#conns.add(conn);
      void this.#serve(conn, address).catch(() => closeConn(conn)).finally(() => {
        this.#conns.delete(conn);
        const left = (this.#open.get(address) ?? 1) - 1;
        if (left <= 0) this.#open.delete(address);
        else this.#open.set(address, left);
      });
    }
  }

  /** One connection: its request, then a response, or a WebSocket for as long as it lasts. */
  async #serve(conn: Deno.Conn, address: string): Promise<void> {
    const read = await readHead(conn);
    if (read === null) {
      closeConn(conn);
      return;
    }
    const { head, rest } = read;
    const port = (conn.remoteAddr as Deno.NetAddr).port;
    const name = `${address.includes(":") ? `[${address}]` : address}:${port}`;
    const guarded = head.repeated.has("host") ? "E_REMOTE_HOST" : guardRequest(head.headers, this.#hosts);
    if (guarded !== null) {
      // Not a failed attempt of this address: a page of another site would otherwise lock its user out.
      this.#refused(name, guarded, head.path);
      await this.#respond(
        conn,
        refusal(
          guarded,
          guarded === "E_REMOTE_HOST"
            ? "This daemon does not answer to that Host (see --allow-host)"
            : "Requests from another site's page are refused",
        ),
      );
      return;
    }
    if (head.path === MCP_PATH && this.#options.mcp !== undefined) {
      await serveRoute(conn, head, rest, address, name, this.#route(this.#options.mcp));
      return;
    }
    if (head.path === TOKEN_PATH) {
      const refused = (code: RemoteRefusal, noToken: boolean) =>
        this.#refused(name, code, TOKEN_PATH, noToken);
      await this.#respond(conn, checkToken(head, address, this.#limiter, this.#options.tokens, refused));
      return;
    }
    if (head.path === WS_PATH) {
      const peer = await this.#upgrade(conn, head, rest, address, name);
      if (peer !== null) await peer.done;
      return;
    }
    if (head.method !== "GET" && head.method !== "HEAD") {
      await this.#respond(conn, refusal("E_USAGE", `Method ${head.method} is not served here`, 405));
      return;
    }
    const page = Object.hasOwn(this.#pages, head.path) ? this.#pages[head.path] : undefined;
    const assetName = head.path.startsWith("/assets/") ? head.path.slice("/assets/".length) : "";
    const found = page ?? (Object.hasOwn(this.#assets, assetName) ? this.#assets[assetName] : undefined);
    await this.#respond(
      conn,
      found === undefined ? refusal("E_PATH_NOT_FOUND", "Nothing is served at this path") : {
        status: 200,
        headers: { ...SECURITY_HEADERS, "content-type": found.type, "cache-control": "no-cache" },
        body: found.body,
      },
      head.method === "HEAD",
    );
  }

  async #respond(conn: Deno.Conn, response: Reply, head = false): Promise<void> {
    try {
      await writeAll(conn, encodeResponse(response.status, response.headers, response.body, head));
    } catch {
      // The client went away.
    }
    closeConn(conn);
  }

  /** `/mcp`: what the route needs of the listener (`http_route.ts` does the rest). */
  #route(handler: HttpHandler): RouteContext {
    return {
      handler,
      limiter: this.#limiter,
      tokens: this.#options.tokens,
      audit: this.#options.audit,
      refused: (peer, code, noToken) => this.#refused(peer, code, MCP_PATH, noToken),
      refuse: (conn, code, message, status, extra) =>
        this.#respond(conn, refusal(code, message, status, extra)),
      respond: (conn, status, headers, body) =>
        this.#respond(conn, { status, headers: { ...SECURITY_HEADERS, ...headers }, body }),
      headers: SECURITY_HEADERS,
    };
  }

  /** The WebSocket handshake's checks, in order; the peer, or null after a refusal. */
  async #upgrade(
    conn: Deno.Conn,
    head: RequestHead,
    rest: Uint8Array,
    address: string,
    name: string,
  ): Promise<(WsPeer & { done: Promise<void> }) | null> {
    const h = head.headers;
    const key = h.get("sec-websocket-key") ?? "";
    // Only a real handshake goes further: a plain GET (an <img>, a fetch without Origin) is answered here
    // and counts as nothing.
    if (
      head.method !== "GET" || (h.get("upgrade") ?? "").toLowerCase() !== "websocket" ||
      !/^[A-Za-z0-9+/]{22}==$/.test(key) || h.get("sec-websocket-version") !== "13"
    ) {
      await this.#respond(conn, refusal("E_USAGE", `${WS_PATH} takes WebSocket handshakes only`));
      return null;
    }
    const locked = this.#limiter.lockedFor(address);
    if (locked > 0) {
      await this.#respond(
        conn,
        refusal("E_REMOTE_LIMITED", "Too many failed attempts: try again later", undefined, {
          "retry-after": String(Math.ceil(locked / 1000)),
        }),
      );
      return null;
    }
    const max = this.#options.maxClients ?? DEFAULT_MAX_CLIENTS;
    if (this.#peers.size >= max) {
      this.#refused(name, "E_REMOTE_BUSY", WS_PATH);
      await this.#respond(conn, refusal("E_REMOTE_BUSY", `The daemon serves ${max} remote clients already`));
      return null;
    }
    const offered = (h.get("sec-websocket-protocol") ?? "").split(",").map((p) => p.trim()).filter((p) =>
      p !== ""
    );
    let token: string | null = null;
    const authorization = head.repeated.has("authorization") ? null : h.get("authorization");
    if (authorization !== null && /^bearer /i.test(authorization)) token = authorization.slice(7).trim();
    for (const protocol of offered) {
      if (protocol.startsWith(WS_TOKEN_PREFIX)) token ??= protocol.slice(WS_TOKEN_PREFIX.length);
    }
    if (token === null || token === "") {
      // Nothing was guessed: not a failed attempt.
      this.#refused(name, "E_REMOTE_AUTH", WS_PATH, true);
      await this.#respond(conn, refusal("E_REMOTE_AUTH", "A token is required", undefined, AUTHENTICATE));
      return null;
    }
    const grant = token.length > 1024 ? null : this.#options.tokens.check(token);
    if (grant === null) {
      const lock = this.#limiter.fail(address);
      this.#refused(name, lock > 0 ? "E_REMOTE_LIMITED" : "E_REMOTE_AUTH", WS_PATH);
      await this.#respond(conn, refusal("E_REMOTE_AUTH", "The token is not valid", undefined, AUTHENTICATE));
      return null;
    }
    // A browser that offered subprotocols must be answered with one of them: ours.
    if (offered.length > 0 && !offered.includes(WS_SUBPROTOCOL)) {
      await this.#respond(conn, refusal("E_USAGE", `Offer the "${WS_SUBPROTOCOL}" subprotocol`));
      return null;
    }
    // Each connection is audited: an address opens at most so many a minute.
    const now = Date.now();
    const recent = (this.#connects.get(address) ?? []).filter((at) => now - at < 60_000);
    if (recent.length >= CONNECTS_PER_MINUTE) {
      this.#refused(name, "E_REMOTE_LIMITED", WS_PATH);
      await this.#respond(
        conn,
        refusal("E_REMOTE_LIMITED", "Too many connections: try again later", undefined, {
          "retry-after": "10",
        }),
      );
      return null;
    }
    recent.push(now);
    this.#connects.set(address, recent);
    if (this.#connects.size > 4096) this.#connects.delete(this.#connects.keys().next().value!);
    const accept = createHash("sha1").update(key + WS_GUID).digest("base64");
    try {
      await writeAll(
        conn,
        encodeResponse(101, {
          upgrade: "websocket",
          connection: "Upgrade",
          "sec-websocket-accept": accept,
          ...(offered.length > 0 ? { "sec-websocket-protocol": WS_SUBPROTOCOL } : {}),
        }),
      );
    } catch {
      closeConn(conn);
      return null;
    }
    return this.#admit(conn, rest, name, grant);
  }

  #admit(conn: Deno.Conn, rest: Uint8Array, name: string, grant: Grant): WsPeer & { done: Promise<void> } {
    const options = this.#options;
    const openedAt = performance.now();
    const audit = options.audit;
    const { promise: done, resolve } = Promise.withResolvers<void>();
    const host: PeerHost = {
      line: (peer, line) => options.host.line(peer, line),
      closed: (peer: Peer, reason) => {
        this.#peers.delete(peer as WsPeer);
        audit?.record("disconnect", {
          peer: peer.name,
          scope: grant.scope,
          token: grant.label,
          sessions: [...peer.touched].sort(),
          reason,
          duration_ms: Math.round(performance.now() - openedAt),
        });
        options.host.closed(peer, reason);
        resolve();
      },
    };
    const peer = Object.assign(new WsPeer(conn, rest, name, { ...grant }, host), { done });
    this.#peers.add(peer);
    audit?.record("connect", {
      peer: name,
      scope: grant.scope,
      token: grant.label,
      ...(grant.sessions === null ? {} : { only: [...grant.sessions].sort() }),
      transport: "websocket",
    });
    options.accepted(peer);
    return peer;
  }

  /** Drops the clients with the most waiting while all together hold more than {@link TOTAL_UNSENT}. */
  #holdBudget(): void {
    let total = 0;
    for (const peer of this.#peers) total += peer.unsent;
    while (total > TOTAL_UNSENT) {
      let worst: WsPeer | null = null;
      for (const peer of this.#peers) if (worst === null || peer.unsent > worst.unsent) worst = peer;
      if (worst === null) return;
      total -= worst.unsent;
      worst.close("dropped: the remote clients together hold too much unsent");
    }
  }

  /** Records a refusal (at most {@link REFUSALS_PER_MINUTE} a minute; the rest are counted). */
  #refused(peer: string, code: RemoteRefusal, path: string, noToken = false): void {
    const minute = Math.floor(Date.now() / 60_000);
    if (minute !== this.#refusals.minute) {
      this.#refusals = { minute, recorded: 0, suppressed: this.#refusals.suppressed };
    }
    if (this.#refusals.recorded >= REFUSALS_PER_MINUTE) {
      this.#refusals.suppressed++;
      return;
    }
    this.#refusals.recorded++;
    const suppressed = this.#refusals.suppressed;
    this.#refusals.suppressed = 0;
    this.#options.audit?.record("refuse", {
      peer,
      code,
      path: path.slice(0, 200),
      ...(noToken ? { no_token: true } : {}),
      ...(suppressed > 0 ? { unrecorded_before: suppressed } : {}),
    });
  }
}

function closeConn(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Closed already.
  }
}
