/**
 * Fuzz target of the network proxy's request heads, what a sandboxed program sends the proxy:
 *
 * - `net_proxy_head`: a head read from a connection in pieces (`readProxyHead`) and parsed
 *   (`parseProxyHead`), then, for plain HTTP, the head the proxy would send on (`forwardedHead`). Oracle:
 *   only typed outcomes (a head, closed, too large; a request or a refusal with a reason), never a throw;
 *   the head is taken exactly when its end comes within 16 KiB, whatever the pieces, and what followed it
 *   comes back whole; a request's host is canonical and its port in 1–65535, its method the request line's;
 *   CONNECT only for `CONNECT host:port`, plain requests only for `http://` URLs (never `https://`, user
 *   information or a fragment); the forwarded head has one `Host`, the checked authority, no `Proxy-*` or
 *   hop-by-hop header, `Connection: close` last, and no line break inside a line; and reading takes time
 *   linear in the bytes.
 *
 * @module
 */
import { HEAD_TIMEOUT_MS, MAX_HEAD_BYTES, parseProxyHead, readProxyHead } from "../../src/net/mod.ts";
import { forwardedHead, hostHeader } from "../../src/net/http_forward.ts";
import { canonicalHost } from "../../src/policy/mod.ts";
import { hash32, Prng } from "./_prng.ts";
import { cpuMs, Crash, type FuzzTarget } from "./_common.ts";
import {
  bytesOf,
  chunkSizes,
  FakeConn,
  mutateBytes,
  randomByteString,
  randomChunking,
  textOf,
  utf8,
} from "./_bytes.ts";

const METHODS = ["CONNECT", "GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "PROPFIND", "VERSION-CONTROL"];
const BAD_METHODS = ["connect", "GE T", "", "C0NNECT", "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGH", "\xc3\xa9"];
const AUTHORITIES = [
  "example.com:443",
  "registry.npmjs.org:443",
  "EXAMPLE.COM.:8443",
  "10.1.2.3:22",
  "[::1]:5432",
  "[2001:db8::1]:443",
  "[::ffff:127.0.0.1]:80",
  "vm:8080",
  "localhost:1",
  "xn--bcher-kva.example:443",
  `${"a".repeat(63)}.${"b".repeat(63)}.example:443`,
];
const URLS = [
  "http://example.com/",
  "http://example.com:8080/a?b=c",
  "HTTP://Example.COM",
  "http://example.com?q",
  "http://[::1]:81/x",
  "http://10.0.0.1/%00/../x",
  "http://localhost:65535/a/b/c",
];
const BAD_TARGETS = [
  "localhost:0",
  "localhost:65536",
  "localhost:",
  "localhost",
  "::1:443",
  "[::1",
  "[::1]x:1",
  "[fe80::1%25eth0]:443",
  "127.1:80",
  "0x7f.0.0.1:80",
  "a_b.example:443",
  "http://user:pw@example.com/",
  "http://example.com/#frag",
  "http://example.com:99999/",
  "http:///path",
  "https://example.com/",
  "ftp://example.com/",
  "/relative",
  "*",
  "é.example:443",
  `http://example.com/${"p".repeat(8000)}`,
];
const VERSIONS = ["HTTP/1.1", "HTTP/1.0"];
const BAD_VERSIONS = ["HTTP/2.0", "http/1.1", "HTTP/1", "HTTP/1.1 ", ""];
const HEADERS = [
  "Host: example.com:443",
  "Host: evil.test",
  "host: twice.test",
  "Proxy-Authorization: Basic eA==",
  "Proxy-Connection: keep-alive",
  "proxy-foo: bar",
  "Connection: keep-alive, X-Secret, Content-Length",
  "Connection: Upgrade",
  "Upgrade: websocket",
  "Keep-Alive: 5",
  "TE: trailers",
  "Trailer: X",
  "X-Secret: s",
  "User-Agent: curl/7.88.1",
  "Content-Length: 5",
  "Content-Length: 6",
  "Transfer-Encoding: chunked",
  "X-Empty:",
  "X-Obs: \xe9\xff",
  "X-Space: \t v \t",
  `X-Long: ${"v".repeat(3000)}`,
];
const BAD_HEADERS = [
  "Content-Length: -1",
  "X-Fold: a\r\n b",
  "X-Ctl: a\x01b",
  "Bad Name: x",
  "Name : x",
  ":nothing",
  "NoColon",
  "X-Nul: \0",
];
const HEAD_TOKENS = [
  "\r\n",
  "\r\n\r\n",
  "\n",
  "\r",
  ":",
  " ",
  "\t",
  "[",
  "]",
  "@",
  "#",
  "//",
  "\0",
  "\xff",
  "?",
];

/** Hop-by-hop and proxy headers the forwarded head must not carry. */
const NEVER_FORWARDED = /^(host|connection|proxy-[^:]*|keep-alive|te|trailer|upgrade):/i;

/** A head as a client could send it (mostly well formed), then some bytes after it (one character per byte). */
function requestBytes(rng: Prng): string {
  const method = rng.chance(0.4) ? "CONNECT" : rng.chance(0.9) ? rng.pick(METHODS) : rng.pick(BAD_METHODS);
  const target = rng.chance(0.85)
    ? rng.pick(method === "CONNECT" ? AUTHORITIES : URLS)
    : rng.pick([...BAD_TARGETS, ...AUTHORITIES, ...URLS]);
  const lines = [`${method} ${target} ${rng.chance(0.9) ? rng.pick(VERSIONS) : rng.pick(BAD_VERSIONS)}`];
  for (let n = rng.below(7); n > 0; n--) {
    lines.push(rng.chance(0.93) ? rng.pick(HEADERS) : rng.pick(BAD_HEADERS));
  }
  const end = rng.pick(["\r\n\r\n", "\r\n\r\n", "\r\n\r\n", "\r\n\r\n", "\n\n", "\r\n", ""]);
  const rest = rng.chance(0.3) ? randomByteString(rng, rng.below(40)) : "";
  return utf8(lines.join("\r\n")) + end + rest;
}

/** Where the head ends (its CRLF CRLF), or -1. */
function headEnd(bytes: Uint8Array): number {
  for (let i = 3; i < bytes.length; i++) {
    if (bytes[i] === 10 && bytes[i - 1] === 13 && bytes[i - 2] === 10 && bytes[i - 3] === 13) return i - 3;
  }
  return -1;
}

/** The properties of one parse of `head` (the bytes before its blank line). */
function checkParse(head: Uint8Array): void {
  const parsed = parseProxyHead(head);
  const text = textOf(head);
  const requestLine = text.split("\r\n")[0]!;
  if (!parsed.ok) {
    if (typeof parsed.reason !== "string" || parsed.reason.length === 0) {
      throw new Crash("A refusal without a reason");
    }
    if (parsed.method.length > 32 || !/^[A-Z-]*$/.test(parsed.method)) {
      throw new Crash(`A refusal's method "${parsed.method.slice(0, 40)}" would not fit the event`);
    }
    return;
  }
  const request = parsed.request;
  const [method, target, version] = requestLine.split(" ");
  if (!/^HTTP\/1\.[01]$/.test(version ?? "") || requestLine.split(" ").length !== 3) {
    throw new Crash(`Request line "${requestLine.slice(0, 80)}" was taken`);
  }
  if (request.method !== method || method.length > 32) {
    throw new Crash("The method is not the request line's");
  }
  const canonical = canonicalHost(request.hostKind === "ipv6" ? `[${request.host}]` : request.host);
  if (canonical === null || canonical.host !== request.host || canonical.kind !== request.hostKind) {
    throw new Crash(`Host "${request.host}" is not canonical`);
  }
  if (!Number.isInteger(request.port) || request.port < 1 || request.port > 65535) {
    throw new Crash(`Port ${request.port} was taken`);
  }
  if (request.kind === "connect") {
    if (method !== "CONNECT" || /[/@?#]/.test(target!)) throw new Crash(`CONNECT target "${target}" taken`);
    return;
  }
  if (method === "CONNECT") throw new Crash("A CONNECT was taken as a plain request");
  const authority = target!.replace(/^http:\/\//i, "").split(/[/?]/)[0]!;
  if (!/^http:\/\//i.test(target!) || authority.includes("@")) {
    throw new Crash(`Plain request target "${target!.slice(0, 80)}" was taken`);
  }
  if (target!.includes("#")) throw new Crash("A fragment was taken");
  if (!request.target.startsWith("/") || !/^[\x21-\x7e]+$/.test(request.target)) {
    throw new Crash(`Origin-form target "${request.target.slice(0, 80)}" is malformed`);
  }
  const forwarded = forwardedHead(request);
  if (!forwarded.endsWith("\r\nConnection: close\r\n\r\n")) throw new Crash("Connection: close is not last");
  const lines = forwarded.slice(0, -4).split("\r\n");
  if (lines.some((line) => /[\r\n\0]/.test(line))) throw new Crash("A forwarded line holds a line break");
  if (lines[0] !== `${request.method} ${request.target} ${request.version}`) {
    throw new Crash("The forwarded request line is not origin form");
  }
  const hosts = lines.filter((line) => /^host:/i.test(line));
  if (hosts.length !== 1 || hosts[0] !== `Host: ${hostHeader(request.host, request.port)}`) {
    throw new Crash(`Forwarded Host lines ${JSON.stringify(hosts)} are not the checked authority`);
  }
  for (const line of lines.slice(2, -1)) {
    if (NEVER_FORWARDED.test(line)) throw new Crash(`Header "${line.slice(0, 40)}" was forwarded`);
  }
  const lengths = lines.filter((line) => /^content-length:/i.test(line));
  const chunked = lines.some((line) => /^transfer-encoding:/i.test(line));
  if (lengths.length > 1 || (lengths.length === 1 && chunked)) {
    throw new Crash("An ambiguous body length passed");
  }
  // The body passed on is the one the server will read: Content-Length bytes, none, or chunked to its end.
  const declared = chunked ? null : lengths.length === 1 ? Number(lengths[0]!.split(":")[1]) : 0;
  if (request.bodyLength !== declared) {
    throw new Crash(`Body length ${request.bodyLength} is not ${declared}`);
  }
}

const netProxyHead: FuzzTarget = {
  name: "net_proxy_head",
  about: "Network proxy request heads read in pieces (readProxyHead, parseProxyHead) and forwarded heads",
  generate(rng) {
    const roll = rng.below(1000);
    let body: string;
    let chunking = randomChunking(rng);
    if (roll < 3) {
      // A head as long as is taken, sent in small pieces: the cost per byte must stay.
      const pad = MAX_HEAD_BYTES - 64 - rng.below(64);
      body = `CONNECT example.com:443 HTTP/1.1\r\nX-Pad: ${"p".repeat(pad)}` +
        (rng.chance(0.5) ? "\r\n\r\n" : "");
      chunking = String(1 + rng.below(3));
    } else if (roll < 500) body = requestBytes(rng);
    else if (roll < 950) body = mutateBytes(rng, requestBytes(rng), HEAD_TOKENS);
    else body = randomByteString(rng, rng.below(200));
    return `${chunking}\n${body}`;
  },
  async run(input) {
    const newline = input.indexOf("\n");
    const chunking = input.slice(0, newline);
    const bytes = bytesOf(input.slice(newline + 1));
    const pieces = new Prng(hash32(chunking));
    const conn = new FakeConn(bytes, chunkSizes(chunking, () => pieces.u32() / 0x100000000));
    const started = cpuMs();
    const got = await readProxyHead(conn.conn, HEAD_TIMEOUT_MS);
    if (conn.delivered > MAX_HEAD_BYTES) throw new Crash(`${conn.delivered} bytes were read for a head`);
    const end = headEnd(bytes);
    if (end < 0 || end + 4 > MAX_HEAD_BYTES) {
      const want = bytes.length >= MAX_HEAD_BYTES ? "too_large" : "closed";
      if (got.kind !== want) throw new Crash(`A head without its end within the cap gave "${got.kind}"`);
    } else {
      if (got.kind !== "head") throw new Crash(`A head within the cap gave "${got.kind}"`);
      if (got.head.length !== end || !got.head.every((b, i) => b === bytes[i])) {
        throw new Crash("The head read is not the bytes before the blank line");
      }
      const rest = bytes.subarray(end + 4, conn.delivered);
      if (got.rest.length !== rest.length || !got.rest.every((b, i) => b === rest[i])) {
        throw new Crash("The bytes after the head did not come back whole");
      }
      checkParse(got.head);
    }
    // Whatever the bytes, the parser alone gives a typed outcome too (heads the reader would not take).
    checkParse(bytes.subarray(0, Math.min(bytes.length, MAX_HEAD_BYTES)));
    const took = cpuMs() - started;
    const bound = 100 + conn.delivered * 0.004 + bytes.length * 0.004;
    if (took > bound) {
      throw new Crash(
        `Reading ${conn.delivered} bytes of a head took ${Math.round(took)} ms of CPU (bound ${bound})`,
      );
    }
  },
};

/** The network proxy's targets. */
export const NET_TARGETS: readonly FuzzTarget[] = [netProxyHead];
