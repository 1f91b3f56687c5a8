/**
 * The listener's own HTTP/1.1, as small as the viewer needs: the head of one request per connection (read
 * with a size cap and a deadline, so a client that sends nothing, or a head byte by byte, costs one
 * descriptor for at most {@link HEAD_TIMEOUT_MS}), and whole responses with `Connection: close`.
 *
 * @module
 */

/** Largest request head (request line and headers). */
export const MAX_HEAD_BYTES = 16 * 1024;
/** How long a client may take to send its request head. */
export const HEAD_TIMEOUT_MS = 10_000;

/** A request's head. */
export interface RequestHead {
  readonly method: string;
  /** The request target's path (no query). */
  readonly path: string;
  readonly headers: Headers;
  /** Headers sent more than once (Host twice is refused). */
  readonly repeated: ReadonlySet<string>;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * Reads a request head; what followed it (a WebSocket client's first frames) comes back as `rest`. Null when
 * the client closed, was too slow, sent too much, or sent no valid head.
 */
export async function readHead(
  conn: Deno.Conn,
  timeoutMs = HEAD_TIMEOUT_MS,
): Promise<{ head: RequestHead; rest: Uint8Array } | null> {
  const buffer = new Uint8Array(MAX_HEAD_BYTES);
  let length = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), timeoutMs));
  try {
    for (;;) {
      const n = await Promise.race([conn.read(buffer.subarray(length)), expired]);
      if (n === null || n === 0) return null;
      // Only a new byte can be the head's last: a head sent byte by byte is not scanned again from its start
      // with every byte (quadratic: 0.2 s of the daemon's thread for 16 KiB).
      const end = indexOfHeadEnd(buffer, Math.max(3, length), length + n);
      length += n;
      if (end >= 0) {
        const head = parseHead(decoder.decode(buffer.subarray(0, end)));
        return head === null ? null : { head, rest: buffer.slice(end + 4, length) };
      }
      if (length >= MAX_HEAD_BYTES) return null;
    }
  } catch {
    return null; // Reset, or a failed TLS handshake.
  } finally {
    clearTimeout(timer);
  }
}

/** Where the head's blank line (CR LF CR LF) starts, when its last byte is at an index in [from, to); else -1. */
function indexOfHeadEnd(buffer: Uint8Array, from: number, to: number): number {
  for (let i = from; i < to; i++) {
    if (buffer[i] === 10 && buffer[i - 1] === 13 && buffer[i - 2] === 10 && buffer[i - 3] === 13) {
      return i - 3;
    }
  }
  return -1;
}

/** Parses a request head (without its blank line); null when it is not HTTP/1.x. */
export function parseHead(text: string): RequestHead | null {
  const lines = text.split("\r\n");
  const request = /^([A-Z]{1,16}) (\S{1,8000}) HTTP\/1\.[01]$/.exec(lines[0] ?? "");
  if (request === null) return null;
  const headers = new Headers();
  const repeated = new Set<string>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon <= 0) return null;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name)) return null;
    const value = line.slice(colon + 1).trim();
    try {
      if (headers.has(name)) repeated.add(name);
      headers.append(name, value);
    } catch {
      return null; // A value Headers refuses (control characters).
    }
  }
  const target = request[2]!;
  if (!target.startsWith("/")) return null;
  const path = target.split("?")[0]!;
  return { method: request[1]!, path, headers, repeated };
}

const REASONS: Record<number, string> = {
  101: "Switching Protocols",
  200: "OK",
  202: "Accepted",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  411: "Length Required",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  503: "Service Unavailable",
};

/** A whole response; `Connection: close` unless it switches protocols. */
export function encodeResponse(
  status: number,
  headers: Record<string, string>,
  body: string | Uint8Array = "",
  head = false,
): Uint8Array {
  const bytes = typeof body === "string" ? encoder.encode(body) : body;
  const lines = [`HTTP/1.1 ${status} ${REASONS[status] ?? "Status"}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (status !== 101) lines.push(`content-length: ${bytes.length}`, "connection: close");
  const top = encoder.encode(lines.join("\r\n") + "\r\n\r\n");
  if (head || status === 101 || bytes.length === 0) return top;
  const out = new Uint8Array(top.length + bytes.length);
  out.set(top, 0);
  out.set(bytes, top.length);
  return out;
}

/** Writes all of `bytes` (a write may take part of them). */
export async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let at = 0;
  while (at < bytes.length) at += await conn.write(bytes.subarray(at));
}
