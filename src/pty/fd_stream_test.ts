import assert from "node:assert/strict";
import { closeQuietly } from "./_libc.ts";
import { FdStream, MAX_QUEUED_BYTES } from "./fd_stream.ts";
import { setNonBlocking, unixSocketPair } from "./pty.ts";

// The reactor's off-thread poll() settles a moment after the last stream left it.
const sanitize = { sanitizeOps: false, sanitizeResources: false };

function pair(): [FdStream, FdStream] {
  const [a, b] = unixSocketPair("stream", "E_FD_PASSING");
  setNonBlocking(a);
  setNonBlocking(b);
  return [new FdStream(a), new FdStream(b)];
}

function collect(stream: FdStream, bytes: number): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let length = 0;
  return new Promise((resolve) => {
    stream.onData = (chunk) => {
      parts.push(chunk);
      length += chunk.length;
      if (length < bytes) return;
      const out = new Uint8Array(length);
      let at = 0;
      for (const part of parts) {
        out.set(part, at);
        at += part.length;
      }
      resolve(out);
    };
  });
}

Deno.test({
  name: "FdStream: 5 MB one way arrive whole and in order (more than a socket buffer: writes wait for room)",
  ...sanitize,
  fn: async () => {
    const [a, b] = pair();
    const data = new Uint8Array(5_000_000).map((_, i) => (i * 7) & 0xff);
    const got = collect(b, data.length);
    await a.write(data);
    assert.deepEqual(await got, data);
    a.close();
    await b.closed; // The peer's end of stream ends it.
    assert.equal(b.isClosed, true);
  },
});

Deno.test({
  name: "FdStream: a write to a closed peer rejects; a closed stream refuses writes; onClose is told once",
  ...sanitize,
  fn: async () => {
    const [a, b] = pair();
    const reasons: string[] = [];
    a.onClose = (reason) => reasons.push(reason);
    b.close();
    // The first write may still fit in the kernel's buffer before the reset is seen: write until it fails.
    await assert.rejects(async () => {
      for (let i = 0; i < 100; i++) await a.write(new Uint8Array(65536));
    }, /E_FD_PASSING|connection/i);
    await a.closed;
    await assert.rejects(() => a.write(new Uint8Array(1)), /closed/);
    assert.equal(reasons.length, 1);
  },
});

Deno.test({
  name: "FdStream: more than MAX_QUEUED_BYTES waiting for a peer that reads nothing is refused at once",
  ...sanitize,
  fn: async () => {
    const [a, b] = unixSocketPair("stream", "E_FD_PASSING");
    setNonBlocking(a);
    const stream = new FdStream(a);
    await assert.rejects(() => stream.write(new Uint8Array(MAX_QUEUED_BYTES + 1)), /does not read/);
    assert.equal(stream.isClosed, false, "the stream goes on");
    stream.close();
    closeQuietly(b);
  },
});
