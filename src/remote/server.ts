/**
 * The daemon's TCP listener (`specter daemon --bind`): HTTP(S) with the web viewer's pages and assets, and
 * the daemon's JSON-RPC on a WebSocket at `/v1/ws`. Every request is first held against the Host allow-list
 * and the Origin rule (`guard.ts`); the WebSocket then needs a token (`Authorization: Bearer`, or a
 * `specter.token.<token>` subprotocol from a browser), compared in constant time, with failed attempts
 * limited per peer address. The pages need no token (they hold no secret; the page takes its token from
 * the URL's fragment, which no request carries). Nothing is printed to stdout; every connection and
 * refusal goes to the audit log, never a token.
 *
 * @module
 */
import type { AuditLog } from "../artifacts/mod.ts";
import {
  REMOTE_REFUSALS,
  type RemoteRefusal,
  WS_PATH,
  WS_SUBPROTOCOL,
  WS_TOKEN_PREFIX,
} from "../protocol/mod.ts";
import type { Asset } from "./assets.ts";
import { RemoteError } from "./errors.ts";
import { allowedHosts, guardRequest, isLoopback } from "./guard.ts";
import { FailureLimiter } from "./limiter.ts";
import type { Peer, PeerHost } from "./peer.ts";
import type { Grant, TokenSet } from "./tokens.ts";
import { WsPeer } from "./ws_peer.ts";

/** Remote clients at once, by default. */
export const DEFAULT_MAX_CLIENTS = 64;
/** Refusals recorded in the audit log per minute at most (the rest are counted in the next one). */
const REFUSALS_PER_MINUTE = 100;

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
}

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; " +
    "style-src 'self' 'unsafe-inline'; connect-src 'self' blob: data:; img-src 'self' data: blob:; " +
    "font-src 'self' data:; worker-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "x-frame-options": "DENY",
};

/** The listener. */
export class RemoteServer {
  readonly #options: RemoteServerOptions;
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  readonly #hosts: Set<string>;
  readonly #limiter = new FailureLimiter();
  readonly #peers = new Set<WsPeer>();
  #refusals = { minute: 0, recorded: 0, suppressed: 0 };
  #pages: Readonly<Record<string, Asset>> = {};
  #assets: Readonly<Record<string, Asset>> = {};
  /** The viewer's address (no token). */
  readonly url: string;

  private constructor(options: RemoteServerOptions, server: Deno.HttpServer<Deno.NetAddr>) {
    this.#options = options;
    this.#server = server;
    const port = server.addr.port;
    this.#hosts = allowedHosts(options.hostname, port, options.allowHosts ?? []);
    const host = options.hostname.includes(":") ? `[${options.hostname}]` : options.hostname;
    this.url = `${options.tls === null ? "http" : "https"}://${host}:${port}/`;
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
    let self: RemoteServer | null = null;
    let server: Deno.HttpServer<Deno.NetAddr>;
    try {
      server = Deno.serve({
        hostname: options.hostname,
        port: options.port,
        ...(options.tls === null ? {} : { cert: options.tls.cert, key: options.tls.key }),
        // The default prints to stdout, where a foreground daemon's caller may read something else.
        onListen: () => {},
        onError: (error) => {
          options.log(`remote: a request failed: ${String(error)}`);
          return refusal("E_USAGE", "The request failed");
        },
      }, (request, info) => self!.#handle(request, info));
    } catch (error: unknown) {
      throw new RemoteError(
        "E_REMOTE_BIND",
        `Cannot listen on "${options.hostname}:${options.port}": ${(error as Error).message}`,
        { cause: error, details: { hostname: options.hostname, port: options.port } },
      );
    }
    self = new RemoteServer(options, server);
    self.#pages = PAGES;
    self.#assets = ASSETS;
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
  async close(): Promise<void> {
    for (const peer of this.#peers) peer.close("the daemon stops");
    await this.#server.shutdown();
  }

  #handle(request: Request, info: Deno.ServeHandlerInfo<Deno.NetAddr>): Response {
    const address = info.remoteAddr.hostname;
    const name = `${address.includes(":") ? `[${address}]` : address}:${info.remoteAddr.port}`;
    const url = new URL(request.url);
    const guarded = guardRequest(request.headers, this.#hosts, url.host);
    if (guarded !== null) {
      // Not a failed attempt of this address: a page of another site would otherwise lock its user out.
      this.#refused(name, guarded, url.pathname);
      return refusal(
        guarded,
        guarded === "E_REMOTE_HOST"
          ? "This daemon does not answer to that Host (see --allow-host)"
          : "Requests from another site's page are refused",
      );
    }
    if (url.pathname === WS_PATH) return this.#upgrade(request, address, name);
    if (request.method !== "GET" && request.method !== "HEAD") {
      return refusal("E_USAGE", `Method ${request.method.slice(0, 10)} is not served here`, 405);
    }
    const page = Object.hasOwn(this.#pages, url.pathname) ? this.#pages[url.pathname] : undefined;
    if (page !== undefined) return asset(page.body, page.type);
    const assetName = url.pathname.startsWith("/assets/") ? url.pathname.slice("/assets/".length) : "";
    const found = Object.hasOwn(this.#assets, assetName) ? this.#assets[assetName] : undefined;
    if (found !== undefined) return asset(found.body, found.type);
    return refusal("E_PATH_NOT_FOUND", "Nothing is served at this path");
  }

  #upgrade(request: Request, address: string, name: string): Response {
    const locked = this.#limiter.lockedFor(address);
    if (locked > 0) {
      return refusal("E_REMOTE_LIMITED", "Too many failed attempts: try again later", undefined, {
        "retry-after": String(Math.ceil(locked / 1000)),
      });
    }
    const max = this.#options.maxClients ?? DEFAULT_MAX_CLIENTS;
    if (this.#peers.size >= max) {
      this.#refused(name, "E_REMOTE_BUSY", WS_PATH);
      return refusal("E_REMOTE_BUSY", `The daemon serves ${max} remote clients already`);
    }
    const offered = (request.headers.get("sec-websocket-protocol") ?? "").split(",").map((p) => p.trim())
      .filter((p) => p !== "");
    let token: string | null = null;
    const authorization = request.headers.get("authorization");
    if (authorization !== null && /^bearer /i.test(authorization)) token = authorization.slice(7).trim();
    for (const protocol of offered) {
      if (protocol.startsWith(WS_TOKEN_PREFIX)) token ??= protocol.slice(WS_TOKEN_PREFIX.length);
    }
    const grant = token === null || token.length > 1024 ? null : this.#options.tokens.check(token);
    if (grant === null) {
      const lock = this.#limiter.fail(address);
      this.#refused(name, lock > 0 ? "E_REMOTE_LIMITED" : "E_REMOTE_AUTH", WS_PATH, token === null);
      return refusal(
        "E_REMOTE_AUTH",
        token === null ? "A token is required" : "The token is not valid",
        undefined,
        { "www-authenticate": 'Bearer realm="specter"' },
      );
    }
    if ((request.headers.get("upgrade") ?? "").toLowerCase() !== "websocket") {
      return refusal("E_USAGE", `${WS_PATH} takes WebSocket upgrades only`);
    }
    // A browser that offered subprotocols must be answered with one of them: ours.
    if (offered.length > 0 && !offered.includes(WS_SUBPROTOCOL)) {
      return refusal("E_USAGE", `Offer the "${WS_SUBPROTOCOL}" subprotocol`);
    }
    let upgraded: { socket: WebSocket; response: Response };
    try {
      upgraded = Deno.upgradeWebSocket(request, {
        ...(offered.length > 0 ? { protocol: WS_SUBPROTOCOL } : {}),
        idleTimeout: 60,
      });
    } catch (error: unknown) {
      return refusal("E_USAGE", `Not a valid WebSocket upgrade: ${(error as Error).message}`);
    }
    this.#admit(upgraded.socket, name, grant);
    return upgraded.response;
  }

  #admit(socket: WebSocket, name: string, grant: Grant): void {
    const options = this.#options;
    const openedAt = performance.now();
    const audit = options.audit;
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
      },
    };
    const peer = new WsPeer(socket, name, { ...grant }, host);
    this.#peers.add(peer);
    audit?.record("connect", {
      peer: name,
      scope: grant.scope,
      token: grant.label,
      ...(grant.sessions === null ? {} : { only: [...grant.sessions].sort() }),
      transport: "websocket",
    });
    options.accepted(peer);
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

function asset(body: string | Uint8Array, type: string): Response {
  return new Response(body as BodyInit, {
    headers: { ...SECURITY_HEADERS, "content-type": type, "cache-control": "no-cache" },
  });
}

/** A refused request: its status, and `{"error": {code, message}}`. */
function refusal(
  code: RemoteRefusal,
  message: string,
  status?: number,
  extra: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ error: { code, message } }) + "\n", {
    status: status ?? REMOTE_REFUSALS[code],
    headers: {
      ...SECURITY_HEADERS,
      ...extra,
      "content-type": "application/json",
      "cache-control": "no-store",
    },
  });
}
