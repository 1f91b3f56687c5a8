/**
 * A plain HTTP request as the proxy sends it on: origin form (`GET /path HTTP/1.1`), `Host` set to the
 * authority that was checked against the allow list (the client's own `Host` is dropped: the decision
 * never trusts it, and the server must not see another name than the one allowed), `Proxy-*` and
 * hop-by-hop headers dropped, and `Connection: close`.
 *
 * One request per connection: the simplest correct choice. With keep-alive the proxy would have to frame
 * every request and response to check each next request's target; with `Connection: close` the server
 * ends the connection after its response and the client opens a new one (checked again) for the next
 * request; and the proxy passes on only the request's own body (`Content-Length` bytes, none without it),
 * dropping whatever a client pipelines after it, so a second request (with another `Host`) never reaches
 * the server. A chunked body (`Transfer-Encoding: chunked` on HTTP/1.1, the only coding taken) is passed on
 * unparsed until the client ends or the server closes: its framing is the server's to read, so bytes after
 * its last chunk (a pipelined request) do reach the server, which was told `Connection: close` and answers
 * one request (hyper and Node's http do). That reaches nothing a `CONNECT` to the same allowed host:port
 * could not; framing chunks here would make the rule above hold for chunked bodies too. The body goes on
 * as sent (its framing header kept, the parser having refused an ambiguous pair), so nothing is re-encoded
 * or buffered. Pure.
 *
 * @module
 */
import type { HttpRequest } from "./proxy_head.ts";

/**
 * Hop-by-hop headers (RFC 9110 §7.6.1) and the proxy's own, never forwarded. `Transfer-Encoding` is
 * hop-by-hop too, but the body goes on exactly as the client framed it, so its framing header goes with it.
 */
const DROPPED = new Set([
  "host",
  "connection",
  "proxy-connection",
  "keep-alive",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "upgrade",
]);

/** Headers a `Connection` header may not remove: the body's framing. */
const KEPT = new Set(["content-length", "transfer-encoding"]);

/** The authority for `Host`: the checked host (IPv6 in brackets), with the port unless it is 80. */
export function hostHeader(host: string, port: number): string {
  const name = host.includes(":") ? `[${host}]` : host;
  return port === 80 ? name : `${name}:${port}`;
}

/** The head to send the server for `request`, one character per byte (Latin-1), with its blank line. */
export function forwardedHead(request: HttpRequest): string {
  const named = new Set<string>();
  for (const [name, value] of request.headers) {
    if (name.toLowerCase() !== "connection" && name.toLowerCase() !== "proxy-connection") continue;
    for (const token of value.split(",")) {
      const lower = token.trim().toLowerCase();
      if (lower.length > 0 && !KEPT.has(lower)) named.add(lower);
    }
  }
  const lines = [`${request.method} ${request.target} ${request.version}`];
  lines.push(`Host: ${hostHeader(request.host, request.port)}`);
  for (const [name, value] of request.headers) {
    const lower = name.toLowerCase();
    if (DROPPED.has(lower) || lower.startsWith("proxy-") || named.has(lower)) continue;
    lines.push(`${name}: ${value}`);
  }
  lines.push("Connection: close");
  return lines.join("\r\n") + "\r\n\r\n";
}

/** A one-character-per-byte string as bytes. */
export function latin1Bytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i) & 0xff;
  return out;
}
