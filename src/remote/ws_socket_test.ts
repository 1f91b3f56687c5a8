import assert from "node:assert/strict";
import { cpuUsage } from "node:process";
import { WsSocket } from "./ws_socket.ts";
import { frameLength, MAX_MESSAGE_BYTES, takeFrame } from "./ws_frame.ts";

/** A client frame, masked with a fixed key. */
function frame(opcode: number, payload: Uint8Array | string, fin = true): Uint8Array {
  const bytes = typeof payload === "string" ? new TextEncoder().encode(payload) : payload;
  const n = bytes.length;
  const head = n < 126
    ? [n | 0x80]
    : n < 65536
    ? [126 | 0x80, n >> 8, n & 0xff]
    : [127 | 0x80, 0, 0, 0, 0, ...[24, 16, 8, 0].map((s) => (n >>> s) & 0xff)];
  const mask = [1, 2, 3, 4];
  const out = new Uint8Array(1 + head.length + 4 + n);
  out.set([(fin ? 0x80 : 0) | opcode, ...head, ...mask]);
  for (let i = 0; i < n; i++) out[1 + head.length + 4 + i] = bytes[i]! ^ mask[i & 3]!;
  return out;
}

function join(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Runs a socket over `bytes` read in pieces of `piece` bytes: the messages, the close code sent. */
async function serve(bytes: Uint8Array, piece = 1 << 16): Promise<{ texts: string[]; code: number | null }> {
  let at = 0;
  const written: Uint8Array[] = [];
  const { promise: closed, resolve } = Promise.withResolvers<void>();
  const conn = {
    read(buffer: Uint8Array): Promise<number | null> {
      if (at >= bytes.length) return Promise.resolve(null);
      const n = Math.min(piece, bytes.length - at, buffer.length);
      buffer.set(bytes.subarray(at, at + n));
      at += n;
      return Promise.resolve(n);
    },
    write(chunk: Uint8Array): Promise<number> {
      written.push(chunk.slice());
      return Promise.resolve(chunk.length);
    },
    close: () => resolve(),
  } as unknown as Deno.Conn;
  const texts: string[] = [];
  new WsSocket(conn, new Uint8Array(0), {
    text: (t) => void texts.push(t),
    refused: () => {},
    closed: () => {},
  });
  await closed;
  const out = join(written);
  const close = out.findLastIndex((_, i) => out[i] === 0x88 && i + 3 < out.length);
  return { texts, code: close < 0 ? null : out[close + 2]! * 256 + out[close + 3]! };
}

Deno.test("takeFrame and frameLength: a whole masked frame, more bytes needed, too large before its payload", () => {
  const whole = frame(1, "hi");
  assert.equal(frameLength(whole.subarray(0, 1)), null);
  assert.equal(frameLength(whole), whole.length);
  assert.equal(takeFrame(whole.subarray(0, whole.length - 1)), null);
  const taken = takeFrame(whole);
  assert.ok(taken !== null && typeof taken === "object");
  assert.equal(new TextDecoder().decode(taken.payload), "hi");
  assert.equal(taken.size, whole.length);
  const huge = new Uint8Array([0x81, 0xff, 0, 0, 0, 0, 0, 0x10, 0, 1]); // 1 MiB + 1, declared.
  assert.equal(takeFrame(huge), "too large");
  assert.equal(frameLength(huge), 14 + MAX_MESSAGE_BYTES + 1);
});

Deno.test("WsSocket: messages whole and fragmented, pings between fragments; the client's close is answered", async () => {
  const got = await serve(
    join([
      frame(1, "a"),
      frame(1, "b", false),
      frame(9, "p"),
      frame(0, "c", false),
      frame(0, "d"),
      frame(8, ""),
    ]),
    3,
  );
  assert.deepEqual(got, { texts: ["a", "bcd"], code: 1000 });
});

Deno.test("WsSocket: an unknown opcode, a continuation of nothing, a new message inside a fragmented one fail the connection", async () => {
  // Each used to be taken as part of a text message (the first two) or as a binary one (1003).
  assert.deepEqual(await serve(join([frame(3, "x"), frame(1, "after")])), { texts: [], code: 1002 });
  assert.deepEqual(await serve(join([frame(0xb, "x"), frame(1, "after")])), { texts: [], code: 1002 });
  assert.deepEqual(await serve(join([frame(1, "a", false), frame(1, "b")])), { texts: [], code: 1002 });
  assert.deepEqual(await serve(frame(0, "x")), { texts: [], code: 1002 });
  assert.deepEqual(await serve(frame(2, "x")), { texts: [], code: 1003 });
  assert.deepEqual(await serve(frame(1, new Uint8Array([0xff]))), { texts: [], code: 1007 });
});

Deno.test("WsSocket: a large message sent in small pieces is joined once, not again with every piece", async () => {
  const size = MAX_MESSAGE_BYTES - 64;
  const bytes = frame(1, new Uint8Array(size).fill(0x61));
  // CPU time, so that another process's turn on the core is no failure. Joining the pending bytes with
  // every 32-byte read copied about 17 GB for this message (seconds); joining once, about 60 ms.
  const before = cpuUsage();
  const got = await serve(bytes, 32);
  const used = cpuUsage(before);
  assert.equal(got.texts[0]?.length, size);
  assert.ok((used.user + used.system) / 1000 < 1000, `${(used.user + used.system) / 1000} ms of CPU`);
});
