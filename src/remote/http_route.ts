/**
 * The listener's HTTP routes that take a request body and a bearer token: `/mcp` (MCP's Streamable HTTP,
 * served by the daemon's handler). The listener has checked Host and Origin; here the token is checked
 * (a control token given every session: the route starts programs), the body read whole within a size
 * cap and a deadline, and the handler's answer written: a whole body, or a stream (SSE) written as it
 * comes until it ends or the client goes away.
 *
 * Only a request that carries a wrong token counts as a failed attempt of its address. Another site's page
 * cannot make one: its Origin is refused before the token is looked at, and a cross-site request with an
 * `Authorization` header needs a CORS preflight (OPTIONS), which this route never allows.
 *
 * @module
 */
import type { AuditLog } from "../artifacts/mod.ts";
import { MCP_PATH, type RemoteRefusal } from "../protocol/mod.ts";
import type { FailureLimiter } from "./limiter.ts";
import type { RequestHead } from "./http_head.ts";
import { writeAll } from "./http_head.ts";
import type { Grant, TokenSet } from "./tokens.ts";

/** Largest request body taken (bytes). */
export const MAX_BODY_BYTES = 1024 * 1024;
/** How long a client may take to send its body. */
export const BODY_TIMEOUT_MS = 10_000;

/** A request with its body. */
export interface HttpRequest {
  readonly method: string;
  readonly headers: Headers;
  readonly body: Uint8Array;
}

/** A handler's answer: a whole body, or a stream written as it comes (then the connection closes). */
export interface HttpReply {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body?: string;
  readonly stream?: ReadableStream<Uint8Array>;
}

/** A route's handler. */
export type HttpHandler = (request: HttpRequest) => Promise<HttpReply>;

/** Why a request is refused, with its status when not the code's own. */
export interface Refused {
  readonly code: RemoteRefusal;
  readonly message: string;
  readonly status?: number;
  /** A wrong token: a failed attempt of the address. */
  readonly failed?: boolean;
  readonly noToken?: boolean;
}

/** The grant of the request's bearer token when it may use the route (a control token for every session). */
export function bearerGrant(head: RequestHead, tokens: TokenSet): Grant | Refused {
  const authorization = head.repeated.has("authorization") ? null : head.headers.get("authorization");
  const token = authorization !== null && /^bearer /i.test(authorization)
    ? authorization.slice(7).trim()
    : "";
  if (token === "") return { code: "E_REMOTE_AUTH", message: "A token is required", noToken: true };
  const grant = token.length > 1024 ? null : tokens.check(token);
  if (grant === null) return { code: "E_REMOTE_AUTH", message: "The token is not valid", failed: true };
  if (grant.scope !== "control" || grant.sessions !== null) {
    return { code: "E_REMOTE_SCOPE", message: "MCP needs a control token given every session" };
  }
  return grant;
}

/**
 * The request's body (`Content-Length` only), or the status to refuse it with: 411 without a length (or
 * chunked), 413 over {@link MAX_BODY_BYTES}, 400 when the client stops sending or is too slow.
 */
export async function readBody(
  conn: Deno.Conn,
  head: RequestHead,
  rest: Uint8Array,
  timeoutMs = BODY_TIMEOUT_MS,
): Promise<Uint8Array | number> {
  if (head.method !== "POST") return new Uint8Array();
  if (head.headers.has("transfer-encoding") || head.repeated.has("content-length")) return 411;
  const text = head.headers.get("content-length");
  if (text === null || !/^\d{1,10}$/.test(text)) return 411;
  const length = Number(text);
  if (length > MAX_BODY_BYTES) return 413;
  if (rest.length >= length) return rest.slice(0, length);
  const body = new Uint8Array(length);
  body.set(rest);
  let at = rest.length;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), timeoutMs));
  try {
    while (at < length) {
      const n = await Promise.race([conn.read(body.subarray(at)), expired]);
      if (n === null || n === 0) return 400;
      at += n;
    }
    return body;
  } catch {
    return 400; // Reset.
  } finally {
    clearTimeout(timer);
  }
}

const encoder = new TextEncoder();

/** Writes a streamed answer: its head (no length: the stream ends with the connection), then each chunk. */
export async function writeStream(
  conn: Deno.Conn,
  status: number,
  headers: Record<string, string>,
  stream: ReadableStream<Uint8Array>,
): Promise<void> {
  const lines = [`HTTP/1.1 ${status} ${status === 200 ? "OK" : "Status"}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  lines.push("connection: close");
  const reader = stream.getReader();
  try {
    await writeAll(conn, encoder.encode(lines.join("\r\n") + "\r\n\r\n"));
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      await writeAll(conn, value);
    }
  } catch {
    // The client went away: the stream is cancelled (what it carried is not a cancel of the call).
    await reader.cancel().catch(() => {
      // Already errored or closed: nothing left to stop.
    });
  } finally {
    reader.releaseLock();
  }
}

/** What a route needs of the listener. */
export interface RouteContext {
  readonly handler: HttpHandler;
  readonly limiter: FailureLimiter;
  readonly tokens: TokenSet;
  readonly audit: AuditLog | null;
  /** Records a refusal in the audit log. */
  refused(peer: string, code: RemoteRefusal, noToken?: boolean): void;
  /** Answers with a refusal (`{"error": {code, message}}`) and closes. */
  refuse(
    conn: Deno.Conn,
    code: RemoteRefusal,
    message: string,
    status?: number,
    extra?: Record<string, string>,
  ): Promise<void>;
  /** Answers with a whole body and closes. */
  respond(conn: Deno.Conn, status: number, headers: Record<string, string>, body: string): Promise<void>;
  /** The listener's security headers, for a streamed answer. */
  readonly headers: Readonly<Record<string, string>>;
}

const AUTHENTICATE = { "www-authenticate": 'Bearer realm="specter"' };

/** Serves one request of a route: the lockout, the token, the body, then the handler's answer. */
export async function serveRoute(
  conn: Deno.Conn,
  head: RequestHead,
  rest: Uint8Array,
  address: string,
  name: string,
  route: RouteContext,
): Promise<void> {
  const locked = route.limiter.lockedFor(address);
  if (locked > 0) {
    const retry = { "retry-after": String(Math.ceil(locked / 1000)) };
    return await route.refuse(
      conn,
      "E_REMOTE_LIMITED",
      "Too many failed attempts: try again later",
      undefined,
      retry,
    );
  }
  const grant = bearerGrant(head, route.tokens);
  if ("code" in grant) {
    const lock = grant.failed === true ? route.limiter.fail(address) : 0;
    route.refused(name, lock > 0 ? "E_REMOTE_LIMITED" : grant.code, grant.noToken);
    const extra = grant.code === "E_REMOTE_AUTH" ? AUTHENTICATE : {};
    return await route.refuse(conn, grant.code, grant.message, undefined, extra);
  }
  const body = await readBody(conn, head, rest);
  if (typeof body === "number") {
    return await route.refuse(conn, "E_USAGE", "The request body was refused", body);
  }
  const reply = await route.handler({ method: head.method, headers: head.headers, body });
  if (reply.headers["mcp-session-id"] !== undefined && !head.headers.has("mcp-session-id")) {
    route.audit?.record("connect", {
      peer: name,
      scope: grant.scope,
      token: grant.label,
      transport: MCP_PATH,
    });
  }
  const headers = { "cache-control": "no-store", ...reply.headers };
  if (reply.stream === undefined) return await route.respond(conn, reply.status, headers, reply.body ?? "");
  await writeStream(conn, reply.status, { ...route.headers, ...headers }, reply.stream);
  try {
    conn.close();
  } catch {
    // Closed already.
  }
}
