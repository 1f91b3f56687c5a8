/**
 * Fuzz targets of the remote listener's own HTTP and WebSocket code, what anyone who reaches the TCP port
 * sends (the WebSocket after a valid token):
 *
 * - `http_head`: a request head read from a connection in pieces (`readHead`), parsed (`parseHead`) and
 *   held against the Host/Origin guard. Oracle: the head is taken exactly when its end comes within 16 KiB
 *   and it parses, whatever the pieces; what followed it comes back whole; a parsed head re-serialises to
 *   the same head; repeated headers are all noted; the guard lets through only allowed Host and Origin; and
 *   reading takes time linear in the bytes (a head sent byte by byte costs no more per byte).
 * - `ws_frame`: a client's frames read by the real `WsSocket` from a connection in pieces. Oracle: a
 *   reference reading of RFC 6455 written here (messages delivered, pongs, the close code), frames the
 *   socket writes well formed, and time linear in the bytes.
 *
 * @module
 */
import { MAX_HEAD_BYTES, parseHead, readHead, type RequestHead } from "../../src/remote/http_head.ts";
import { allowedHosts, guardRequest } from "../../src/remote/guard.ts";
import { WsSocket } from "../../src/remote/ws_socket.ts";
import { MAX_MESSAGE_BYTES } from "../../src/remote/ws_frame.ts";
import { hash32, Prng } from "./_prng.ts";
import { cpuMs, Crash, type FuzzTarget } from "./_common.ts";
import {
  bytesOf,
  chunkSizes,
  FakeConn,
  mutateBytes,
  randomByteString,
  randomChunking,
  utf8,
} from "./_bytes.ts";

// --- http_head ---------------------------------------------------------------------------------------

const METHODS = [
  "GET",
  "GET",
  "GET",
  "HEAD",
  "POST",
  "OPTIONS",
  "get",
  "G",
  "ABCDEFGHIJKLMNOPQ",
  "",
  "GET\t",
];
const REQUEST_TARGETS = [
  "/",
  "/v1/ws",
  "/v1/ws",
  "/replay",
  "/assets/app.js",
  "/v1/ws?token=x",
  "/?",
  "*",
  "http://evil.test/v1/ws",
  "//evil.test",
  "/a b",
  "/%00/..",
  "/é",
  "/" + "a".repeat(7999),
  "/" + "a".repeat(8000),
  "",
];
const VERSIONS = ["HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/1.10", "http/1.1", "HTTP/1"];
const TOKEN = "abcdefghijklmnopqrstuvwxyz0123456789-_";
const HEADERS = [
  "Host: 127.0.0.1:8080",
  "Host: localhost:8080",
  "host: [::1]:8080",
  "Host: LOCALHOST:8080",
  "Host: evil.test",
  "Host: proxy.example:443",
  "Host:",
  "Host : 127.0.0.1:8080",
  " Host: 127.0.0.1:8080",
  "Host:\t127.0.0.1:8080\t",
  "Origin: http://127.0.0.1:8080",
  "Origin: http://localhost:8080",
  "Origin: null",
  "Origin: https://evil.test",
  "Origin: http://127.0.0.1:8080.evil.test",
  "Origin: HTTP://LOCALHOST:8080",
  "Origin: file:///etc",
  "Origin: http://user@127.0.0.1:8080",
  "Upgrade: websocket",
  "Connection: Upgrade",
  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
  "Sec-WebSocket-Version: 13",
  `Sec-WebSocket-Protocol: specter.v1, specter.token.${TOKEN}`,
  `Authorization: Bearer ${TOKEN}`,
  "authorization: bearer",
  "X-Empty:",
  "X-Fold: a\r\n b",
  "X-Ctl: a\x01b",
  "X-Utf8: é😀",
  "X-Space:  \u00a0v\u3000 ",
  `X-Long: ${"v".repeat(3000)}`,
  "Set-Cookie: a=1",
  "Set-Cookie: b=2",
  "Bad Name: x",
  ":nothing",
  "NoColon",
  "X-Nul: \0",
  "Content-Length: 5",
  "Transfer-Encoding: chunked",
];
const HEAD_TOKENS = [
  "\r\n",
  "\r\n\r\n",
  "\n",
  "\r",
  ":",
  " ",
  "\t",
  "Host: x\r\n",
  "\0",
  "\xff",
  "\xc3",
  "?",
];

/** The listener in the tests of the guard: 127.0.0.1:8080, and one more name as `--allow-host` gives. */
const HOSTS = allowedHosts("127.0.0.1", 8080, ["proxy.example:443"]);

/** A request head as a client could send it, then some bytes after it (one character per byte). */
function requestBytes(rng: Prng): string {
  const lines = [`${rng.pick(METHODS)} ${rng.pick(REQUEST_TARGETS)} ${rng.pick(VERSIONS)}`];
  for (let n = rng.below(9); n > 0; n--) lines.push(rng.pick(HEADERS));
  const end = rng.pick(["\r\n\r\n", "\r\n\r\n", "\r\n\r\n", "\n\n", "\r\n", ""]);
  const rest = rng.chance(0.3) ? randomByteString(rng, rng.below(40)) : "";
  return utf8(lines.join("\r\n") + end) + rest;
}

/** Where the head ends (its CRLF CRLF), or -1. */
function headEnd(bytes: Uint8Array): number {
  for (let i = 3; i < bytes.length; i++) {
    if (bytes[i] === 10 && bytes[i - 1] === 13 && bytes[i - 2] === 10 && bytes[i - 3] === 13) return i - 3;
  }
  return -1;
}

function sameHead(a: RequestHead, b: RequestHead): boolean {
  return a.method === b.method && a.path === b.path &&
    JSON.stringify([...a.headers]) === JSON.stringify([...b.headers]) &&
    JSON.stringify([...a.repeated].sort()) === JSON.stringify([...b.repeated].sort());
}

/** The properties of a parsed head; `text`: what it was parsed from. */
function checkHead(head: RequestHead, text: string): void {
  if (!/^[A-Z]{1,16}$/.test(head.method)) throw new Crash(`Method "${head.method}" was taken`);
  if (!head.path.startsWith("/") || /[?\s]/.test(head.path)) throw new Crash(`Path "${head.path}" was taken`);
  for (const [name] of head.headers) {
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name)) throw new Crash(`Header name "${name}" was taken`);
  }
  // Every name sent more than once is noted (a second Host is refused by the listener).
  const counts = new Map<string, number>();
  for (const line of text.split("\r\n").slice(1)) {
    const name = line.slice(0, line.indexOf(":")).trim().toLowerCase();
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  for (const [name, count] of counts) {
    if ((count > 1) !== head.repeated.has(name)) {
      throw new Crash(`Header "${name}" sent ${count}× noted wrong`);
    }
  }
  // Re-serialised, it parses to the same method, path and headers.
  const again = parseHead(
    [`${head.method} ${head.path} HTTP/1.1`, ...[...head.headers].map(([n, v]) => `${n}: ${v}`)].join("\r\n"),
  );
  // Headers joins a repeated header's values with ", ", so an empty last one leaves a trailing space.
  const entries = (headers: Headers) => JSON.stringify([...headers].map(([n, v]) => [n, v.trim()]));
  if (again === null || entries(again.headers) !== entries(head.headers)) {
    throw new Crash("A parsed head does not parse the same once re-serialised");
  }
  if (again.method !== head.method || again.path !== head.path) throw new Crash("Re-serialised head differs");
  const verdict = guardRequest(head.headers, HOSTS);
  if (verdict !== null) return;
  const host = (head.headers.get("host") ?? "").toLowerCase();
  if (!HOSTS.has(host)) throw new Crash(`Host "${host}" passed the guard`);
  const origin = head.headers.get("origin");
  if (origin === null) return;
  const url = new URL(origin);
  if (!/^https?:$/.test(url.protocol) || url.host.toLowerCase() !== host) {
    throw new Crash(`Origin "${origin}" passed the guard for Host "${host}"`);
  }
}

const decoder = new TextDecoder();

const httpHead: FuzzTarget = {
  name: "http_head",
  about: "HTTP request heads read in pieces (readHead, parseHead) and the Host/Origin guard",
  generate(rng) {
    const roll = rng.below(1000);
    let body: string;
    let chunking = randomChunking(rng);
    if (roll < 3) {
      // A head as long as is taken, sent byte by byte (or in small pieces): the cost per byte must stay.
      const pad = MAX_HEAD_BYTES - 64 - rng.below(64);
      body = utf8(`GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-Pad: ${"p".repeat(pad)}`) +
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
    const got = await readHead(conn.conn);
    const took = cpuMs() - started;
    if (conn.delivered > MAX_HEAD_BYTES) throw new Crash(`${conn.delivered} bytes were read for a head`);
    const end = headEnd(bytes);
    if (end < 0 || end + 4 > MAX_HEAD_BYTES) {
      if (got !== null) throw new Crash("A head whose end did not come within the cap was taken");
    } else {
      const text = decoder.decode(bytes.subarray(0, end));
      const want = parseHead(text);
      if ((want === null) !== (got === null)) throw new Crash("readHead and parseHead disagree");
      if (got !== null && want !== null) {
        if (!sameHead(got.head, want)) throw new Crash("readHead's head is not parseHead's");
        const rest = bytes.subarray(end + 4, conn.delivered);
        if (got.rest.length !== rest.length || !got.rest.every((b, i) => b === rest[i])) {
          throw new Crash("The bytes after the head did not come back whole");
        }
        checkHead(got.head, text);
      }
    }
    // Linear: a few microseconds of CPU per byte, even byte by byte (a quadratic scan: 0.25 s for 16 KiB),
    // above a floor for a collection of the worker's heap.
    const bound = 100 + conn.delivered * 0.004;
    if (took > bound) {
      throw new Crash(
        `Reading ${conn.delivered} bytes of a head took ${Math.round(took)} ms of CPU (bound ${bound} ms)`,
      );
    }
  },
};

// --- ws_frame ----------------------------------------------------------------------------------------

const TEXTS = [
  '{"jsonrpc":"2.0","id":1,"method":"daemon.hello","params":{"protocol":1}}\n',
  '{"jsonrpc":"2.0","id":2,"method":"session.list"}\n{"jsonrpc":"2.0","id":3,"method":"session.attach","params":{"name":"a"}}\n',
  "é😀中",
  "",
  "\ufeffbom",
];

/** One client frame: header, mask, masked payload (one character per byte). */
function clientFrame(
  rng: Prng,
  fin: boolean,
  opcode: number,
  payload: Uint8Array,
  options: { rsv?: number; unmasked?: boolean; declared?: number; form?: 7 | 16 | 64 } = {},
): string {
  const declared = options.declared ?? payload.length;
  const form = options.form ?? (declared < 126 ? 7 : declared < 65536 ? 16 : 64);
  const mask = options.unmasked ? 0 : 0x80;
  let out = String.fromCharCode((fin ? 0x80 : 0) | ((options.rsv ?? 0) << 4) | opcode);
  if (form === 7) out += String.fromCharCode(mask | (declared & 0x7f));
  else if (form === 16) out += String.fromCharCode(mask | 126, (declared >> 8) & 0xff, declared & 0xff);
  else {
    const big = BigInt(declared);
    out += String.fromCharCode(mask | 127);
    for (let i = 7; i >= 0; i--) out += String.fromCharCode(Number((big >> BigInt(8 * i)) & 0xffn));
  }
  const key = [rng.below(256), rng.below(256), rng.below(256), rng.below(256)];
  if (!options.unmasked) out += String.fromCharCode(...key);
  for (let i = 0; i < payload.length; i++) {
    out += String.fromCharCode(options.unmasked ? payload[i]! : payload[i]! ^ key[i & 3]!);
  }
  return out;
}

const encoder = new TextEncoder();

/** A sequence of frames a client could send: messages whole and in fragments, control frames, oddities. */
function clientFrames(rng: Prng): string {
  let out = "";
  for (let n = 1 + rng.below(6); n > 0; n--) {
    const roll = rng.below(20);
    const text = encoder.encode(
      rng.chance(0.8) ? rng.pick(TEXTS) : String.fromCodePoint(rng.below(0x110000)),
    );
    if (roll < 8) out += clientFrame(rng, true, 1, text);
    else if (roll < 11) {
      // Fragments, cut anywhere (inside a character too).
      const cuts = [0, rng.below(text.length + 1), text.length].sort((a, b) => a - b);
      out += clientFrame(rng, false, 1, text.subarray(cuts[0], cuts[1]));
      if (rng.chance(0.3)) out += clientFrame(rng, true, 9, encoder.encode("ping"));
      out += clientFrame(rng, true, 0, text.subarray(cuts[1], cuts[2]));
    } else if (roll < 13) {
      out += clientFrame(rng, true, rng.pick([9, 10]), bytesOf(randomByteString(rng, rng.below(20))));
    } else if (roll < 14) out += clientFrame(rng, true, 8, new Uint8Array([3, 232]));
    else if (roll < 15) out += clientFrame(rng, rng.chance(0.5), rng.below(16), text);
    else if (roll < 16) out += clientFrame(rng, true, 1, text, { rsv: 1 + rng.below(7) });
    else if (roll < 17) out += clientFrame(rng, true, 1, text, { unmasked: true });
    else if (roll < 18) out += clientFrame(rng, true, 1, text, { form: rng.pick([16, 64] as const) });
    else if (roll < 19) {
      out += clientFrame(rng, true, rng.pick([1, 9]), new Uint8Array(0), {
        declared: rng.pick([126, 65535, MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES + 1, 2 ** 32, 2 ** 53]),
      });
    } else out += clientFrame(rng, true, 1, bytesOf(randomByteString(rng, rng.below(10))));
  }
  return out;
}

/** What a socket did with a client's bytes. */
interface WsOutcome {
  readonly texts: string[];
  readonly pongs: string[];
  /** The close code sent, or null when the connection just ended (the client's bytes ran out). */
  readonly code: number | null;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** RFC 6455 §5, as the listener applies it to a client (written apart from the socket, as the oracle). */
function referenceRead(bytes: Uint8Array): WsOutcome {
  const out: WsOutcome & { code: number | null } = { texts: [], pongs: [], code: null };
  let at = 0;
  let message: number[] | null = null;
  for (;;) {
    if (bytes.length - at < 2) return out;
    const b0 = bytes[at]!;
    const b1 = bytes[at + 1]!;
    const fin = (b0 & 0x80) !== 0;
    const opcode = b0 & 0x0f;
    if ((b0 & 0x70) !== 0 || (b1 & 0x80) === 0) return { ...out, code: 1002 };
    let length = b1 & 0x7f;
    let head = 2;
    if (length === 126) {
      if (bytes.length - at < 4) return out;
      length = bytes[at + 2]! * 256 + bytes[at + 3]!;
      head = 4;
    } else if (length === 127) {
      if (bytes.length - at < 10) return out;
      length = 0;
      for (let i = 2; i < 10; i++) length = length * 256 + bytes[at + i]!;
      head = 10;
    }
    if (length > MAX_MESSAGE_BYTES) return { ...out, code: 1009 };
    if (opcode >= 8 && (length > 125 || !fin)) return { ...out, code: 1002 };
    if (bytes.length - at < head + 4 + length) return out;
    const payload = new Uint8Array(length);
    for (let i = 0; i < length; i++) payload[i] = bytes[at + head + 4 + i]! ^ bytes[at + head + (i & 3)]!;
    at += head + 4 + length;
    if (opcode === 8) return { ...out, code: 1000 };
    if (opcode === 9) {
      out.pongs.push(String.fromCharCode(...payload));
      continue;
    }
    if (opcode === 10) continue;
    if (opcode === 2) return { ...out, code: 1003 };
    // Unknown opcodes, a continuation of nothing and a new message inside a fragmented one: §5.2, §5.4.
    if (opcode !== 0 && opcode !== 1) return { ...out, code: 1002 };
    if ((opcode === 0) !== (message !== null)) return { ...out, code: 1002 };
    message ??= [];
    for (const b of payload) message.push(b);
    if (message.length > MAX_MESSAGE_BYTES) return { ...out, code: 1009 };
    if (!fin) continue;
    try {
      out.texts.push(strictUtf8.decode(new Uint8Array(message)));
    } catch {
      return { ...out, code: 1007 };
    }
    message = null;
  }
}

/**
 * The server frames `written` holds (unmasked, whole): pongs' payloads and the close code. `cut`: the last
 * may be cut short (the client's end came while it was being written: the rest of the queue is dropped).
 */
function serverFrames(written: Uint8Array, cut: boolean): { pongs: string[]; code: number | null } {
  const out = { pongs: [] as string[], code: null as number | null };
  let at = 0;
  while (at < written.length) {
    if (written.length - at < 2) {
      if (cut) break;
      throw new Crash("The socket wrote a cut frame header");
    }
    const b0 = written[at]!;
    let length = written[at + 1]!;
    if ((b0 & 0xf0) !== 0x80 || (length & 0x80) !== 0) throw new Crash("The socket wrote a bad frame header");
    let head = 2;
    if (length === 126) {
      length = written[at + 2]! * 256 + written[at + 3]!;
      head = 4;
    } else if (length === 127) throw new Crash("The socket wrote a control frame over 64 KiB");
    const payload = written.subarray(at + head, at + head + length);
    if (payload.length !== length) {
      if (cut) break;
      throw new Crash("The socket wrote a cut frame");
    }
    at += head + length;
    const opcode = b0 & 0x0f;
    if (out.code !== null) throw new Crash("The socket wrote after its close frame");
    if (opcode === 0xa) out.pongs.push(String.fromCharCode(...payload));
    else if (opcode === 0x8) out.code = payload[0]! * 256 + payload[1]!;
    else throw new Crash(`The socket wrote opcode ${opcode} unasked`);
  }
  return out;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

const wsFrame: FuzzTarget = {
  name: "ws_frame",
  about: "WebSocket frames from a client, read in pieces by the listener's socket (WsSocket, takeFrame)",
  generate(rng) {
    const roll = rng.below(1000);
    let body: string;
    let chunking = randomChunking(rng);
    if (roll < 2) {
      // One large message in small pieces: reading must stay linear in its size.
      const size = 128 * 1024 + rng.below(MAX_MESSAGE_BYTES - 128 * 1024 - 1024);
      body = clientFrame(rng, true, 1, new Uint8Array(size).fill(0x61));
      chunking = String(64 + rng.below(448));
    } else if (roll < 600) body = clientFrames(rng);
    else if (roll < 970) body = mutateBytes(rng, clientFrames(rng));
    else body = randomByteString(rng, rng.below(100));
    // Some bytes come with the request head (the `rest` readHead hands over).
    return `${chunking} ${rng.chance(0.2) ? rng.below(body.length + 1) : 0}\n${body}`;
  },
  async run(input) {
    const newline = input.indexOf("\n");
    const [chunking, restText] = input.slice(0, newline).split(" ") as [string, string];
    const bytes = bytesOf(input.slice(newline + 1));
    const restLength = Math.min(bytes.length, Number(restText) || 0);
    const pieces = new Prng(hash32(chunking));
    const conn = new FakeConn(
      bytes.subarray(restLength),
      chunkSizes(chunking, () => pieces.u32() / 0x100000000),
    );
    const texts: string[] = [];
    let refused = 0;
    let closedCalls = 0;
    const started = cpuMs();
    new WsSocket(conn.conn, bytes.slice(0, restLength), {
      text: (message) => {
        texts.push(message);
      },
      refused: () => {
        refused++;
      },
      closed: () => {
        closedCalls++;
      },
    });
    await conn.closed;
    const took = cpuMs() - started;
    const want = referenceRead(bytes);
    const got = serverFrames(concat(conn.written), want.code === null);
    if (closedCalls !== 1) throw new Crash(`closed was called ${closedCalls} times`);
    if (JSON.stringify(texts) !== JSON.stringify(want.texts)) {
      throw new Crash(
        `Messages ${JSON.stringify(texts).slice(0, 200)}, expected ${
          JSON.stringify(want.texts).slice(0, 200)
        }`,
      );
    }
    if (got.code !== want.code) throw new Crash(`Close code ${got.code}, expected ${want.code}`);
    const isRefusal = want.code !== null && want.code !== 1000;
    if ((refused > 0) !== isRefusal) {
      throw new Crash(`refused called ${refused}× for close code ${want.code}`);
    }
    // Pongs go before the close frame; when the client's bytes just end, the ones not yet written go.
    const expected = want.code === null ? want.pongs.slice(0, got.pongs.length) : want.pongs;
    if (JSON.stringify(got.pongs) !== JSON.stringify(expected)) {
      throw new Crash("Pongs differ from the pings");
    }
    const bound = 250 + bytes.length * 0.0005;
    if (took > bound) {
      throw new Crash(
        `Reading ${bytes.length} bytes of frames took ${Math.round(took)} ms of CPU (bound ${bound} ms)`,
      );
    }
  },
};

/** The targets of this file. */
export const HTTP_TARGETS: readonly FuzzTarget[] = [httpHead, wsFrame];
