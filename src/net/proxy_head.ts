/**
 * The request head a sandboxed program sends the proxy, parsed strictly: `CONNECT host:port HTTP/1.1`
 * (authority form, IPv6 in brackets) for a tunnel, or `METHOD http://host[:port]/path HTTP/1.1` (absolute
 * form) for plain HTTP. Everything else is refused with a reason: origin-form requests (not a proxy
 * request), `https://` in absolute form (which must go through CONNECT), user information in a URL,
 * folded or malformed header lines, control characters, ambiguous body lengths (request smuggling), bare
 * CR or LF. Pure: the bytes of the head (without its blank line) in, a typed outcome out; never throws.
 *
 * Every byte a sandboxed program sends is hostile: the head is read as bytes (one character per byte),
 * never decoded as UTF-8, so that what is forwarded is exactly what was checked.
 *
 * @module
 */
import { canonicalHost } from "../policy/mod.ts";

/** Largest request head (request line, headers and the blank line). */
export const MAX_HEAD_BYTES = 16 * 1024;
/** How long a client may take to send its whole request head (the clock wins over parsing). */
export const HEAD_TIMEOUT_MS = 10_000;
/** Longest request target taken. */
const MAX_TARGET = 8000;

/** A `CONNECT host:port` request: a tunnel. */
export interface ConnectRequest {
  readonly kind: "connect";
  readonly method: "CONNECT";
  /** The host, canonical (lower case, no trailing dot; IPv6 without brackets). */
  readonly host: string;
  readonly hostKind: "name" | "ipv4" | "ipv6";
  readonly port: number;
}

/** A plain HTTP request in absolute form. */
export interface HttpRequest {
  readonly kind: "http";
  readonly method: string;
  readonly version: "HTTP/1.0" | "HTTP/1.1";
  readonly host: string;
  readonly hostKind: "name" | "ipv4" | "ipv6";
  readonly port: number;
  /** The request target in origin form (`/path?query`). */
  readonly target: string;
  /** The header lines as sent (name as written, value without surrounding whitespace), in order. */
  readonly headers: readonly (readonly [string, string])[];
  /**
   * The body's length (`Content-Length`, 0 without one), or null when it is sent with `Transfer-Encoding`
   * (its end is in the chunks: everything the client sends is passed on).
   */
  readonly bodyLength: number | null;
}

/** What a head parses to. */
export type ProxyHeadParse =
  | { readonly ok: true; readonly request: ConnectRequest | HttpRequest }
  | {
    readonly ok: false;
    /** The method, when the request line had one (for the event); else "". */
    readonly method: string;
    /** Why, in a few words (goes into the 400's body and the event). */
    readonly reason: string;
  };

const REQUEST_LINE = /^([A-Z][A-Z-]{0,31}) ([\x21-\x7e]+) (HTTP\/1\.[01])$/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value: visible characters, spaces, tabs and obs-text; no other control character. */
const VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** The bytes as a string of one character per byte (Latin-1 without windows-1252's remapping). */
export function byteString(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 4096) {
    out += String.fromCharCode(...bytes.subarray(i, Math.min(bytes.length, i + 4096)));
  }
  return out;
}

function bad(method: string, reason: string): ProxyHeadParse {
  return { ok: false, method, reason };
}

/** A host and port from an authority (`host:port`, `[v6]:port`, or without a port when `defaultPort`). */
function parseAuthority(
  text: string,
  defaultPort: number | null,
): { host: string; hostKind: "name" | "ipv4" | "ipv6"; port: number } | string {
  let hostText: string;
  let portText: string | null = null;
  if (text.startsWith("[")) {
    const close = text.indexOf("]");
    if (close < 0) return "an IPv6 address without its closing bracket";
    hostText = text.slice(0, close + 1);
    const after = text.slice(close + 1);
    if (after.length > 0) {
      if (!after.startsWith(":")) return 'text after "]" that is not ":PORT"';
      portText = after.slice(1);
    }
  } else {
    const colons = text.split(":").length - 1;
    if (colons > 1) return "an IPv6 address not in brackets";
    const colon = text.indexOf(":");
    hostText = colon < 0 ? text : text.slice(0, colon);
    if (colon >= 0) portText = text.slice(colon + 1);
  }
  let port: number;
  if (portText === null) {
    if (defaultPort === null) return "no port (CONNECT takes host:port)";
    port = defaultPort;
  } else {
    if (!/^\d{1,5}$/.test(portText)) return "a port that is not a number";
    port = Number(portText);
    if (port < 1 || port > 65535) return "a port outside 1-65535";
  }
  if (hostText.length === 0 || hostText.length > 255) return "no valid host";
  const canonical = canonicalHost(hostText);
  if (canonical === null) return "no valid host";
  return { host: canonical.host, hostKind: canonical.kind, port };
}

/** The request target of an absolute-form `http://` URL: authority and origin-form target, or why not. */
function parseAbsolute(
  target: string,
): { host: string; hostKind: "name" | "ipv4" | "ipv6"; port: number; target: string } | string {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(target);
  if (scheme === null) {
    return target.startsWith("/")
      ? "a path, not a proxy request (give an absolute http:// URL, or CONNECT)"
      : "a request target that is neither http://… nor host:port";
  }
  const name = scheme[1]!.toLowerCase();
  if (name === "https") return "https:// in a plain request (HTTPS goes through CONNECT)";
  if (name !== "http") return `a "${name}" URL (only http:// and CONNECT are proxied)`;
  if (target.includes("#")) return "a fragment in the URL";
  const rest = target.slice(scheme[0].length);
  const end = rest.search(/[/?]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  if (authority.includes("@")) return "user information in the URL";
  const path = end < 0 ? "/" : rest[end] === "?" ? `/${rest.slice(end)}` : rest.slice(end);
  const parsed = parseAuthority(authority, 80);
  if (typeof parsed === "string") return parsed;
  return { ...parsed, target: path };
}

/** Parses a request head: its bytes up to (without) the blank line that ends it. Never throws. */
export function parseProxyHead(bytes: Uint8Array): ProxyHeadParse {
  const text = byteString(bytes);
  const lines = text.split("\r\n");
  if (lines.some((line) => line.includes("\r") || line.includes("\n"))) {
    return bad("", "a bare CR or LF in the head");
  }
  const request = REQUEST_LINE.exec(lines[0]!);
  if (request === null) {
    const method = /^([A-Z][A-Z-]{0,31}) /.exec(lines[0]!)?.[1] ?? "";
    return bad(method, "a malformed request line");
  }
  const method = request[1]!;
  const target = request[2]!;
  if (target.length > MAX_TARGET) return bad(method, `a request target over ${MAX_TARGET} bytes`);
  const headers: [string, string][] = [];
  for (const line of lines.slice(1)) {
    if (line.startsWith(" ") || line.startsWith("\t")) return bad(method, "a folded header line");
    const colon = line.indexOf(":");
    if (colon <= 0) return bad(method, "a header line without a name and a colon");
    const name = line.slice(0, colon);
    if (!TOKEN.test(name)) return bad(method, "a malformed header name");
    const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
    if (!VALUE.test(value)) return bad(method, "a control character in a header value");
    headers.push([name, value]);
  }
  if (method === "CONNECT") {
    const authority = parseAuthority(target, null);
    if (typeof authority === "string") return bad(method, `CONNECT to ${authority}`);
    return { ok: true, request: { kind: "connect", method: "CONNECT", ...authority } };
  }
  const absolute = parseAbsolute(target);
  if (typeof absolute === "string") return bad(method, absolute);
  const lengths = headers.filter(([name]) => name.toLowerCase() === "content-length").map(([, v]) => v);
  const codings = headers.filter(([name]) => name.toLowerCase() === "transfer-encoding").map(([, v]) => v);
  const chunked = codings.length > 0;
  const version = request[3] as "HTTP/1.0" | "HTTP/1.1";
  // Only a lone `chunked` on HTTP/1.1: any other coding (or HTTP/1.0, which has none) leaves the body's end
  // to the server's reading, and the proxy would pass on everything the client sends after its request.
  if (chunked && (codings.length > 1 || codings[0]!.toLowerCase() !== "chunked" || version !== "HTTP/1.1")) {
    return bad(method, "a Transfer-Encoding other than chunked on HTTP/1.1");
  }
  if (lengths.length > 1) return bad(method, "more than one Content-Length");
  if (lengths.length === 1 && !/^\d{1,15}$/.test(lengths[0]!)) {
    return bad(method, "a malformed Content-Length");
  }
  if (lengths.length === 1 && chunked) return bad(method, "both Content-Length and Transfer-Encoding");
  const bodyLength = chunked ? null : lengths.length === 1 ? Number(lengths[0]) : 0;
  return { ok: true, request: { kind: "http", method, version, headers, bodyLength, ...absolute } };
}

/** Where the head's blank line (CR LF CR LF) starts, when its last byte is at an index in [from, to); else -1. */
export function indexOfHeadEnd(buffer: Uint8Array, from: number, to: number): number {
  for (let i = Math.max(3, from); i < to; i++) {
    if (buffer[i] === 10 && buffer[i - 1] === 13 && buffer[i - 2] === 10 && buffer[i - 3] === 13) {
      return i - 3;
    }
  }
  return -1;
}
