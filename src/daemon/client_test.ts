import assert from "node:assert/strict";
import { join } from "node:path";
import { DaemonClient } from "./client.ts";

const encoder = new TextEncoder();

/**
 * A stand-in daemon on a socket of ours (0700 directory): it answers the hello, waits for the client's
 * next line (sent once it listens), then writes `bytes` cut into pieces of `piece` bytes, each piece written
 * on its own. Then it ends the connection, or with `hold` leaves that to the client.
 */
async function withFakeDaemon(
  bytes: Uint8Array,
  piece: number,
  fn: (client: DaemonClient, received: string[]) => Promise<void>,
  hold = false,
): Promise<void> {
  const dir = Deno.makeTempDirSync({ prefix: "specter-client-" });
  Deno.chmodSync(dir, 0o700);
  const path = join(dir, "daemon.sock");
  const listener = Deno.listen({ transport: "unix", path });
  const served = (async () => {
    const conn = await listener.accept();
    const reader = conn.readable.getReader();
    let text = "";
    while (!text.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) return;
      text += new TextDecoder().decode(value);
    }
    const hello = JSON.parse(text.slice(0, text.indexOf("\n"))) as { id: number };
    await conn.write(encoder.encode(JSON.stringify({ jsonrpc: "2.0", id: hello.id, result: {} }) + "\n"));
    while (text.split("\n").length < 3) {
      const { value, done } = await reader.read();
      if (done) return;
      text += new TextDecoder().decode(value);
    }
    for (let at = 0; at < bytes.length; at += piece) await conn.write(bytes.subarray(at, at + piece));
    while (hold && !(await reader.read().catch(() => ({ done: true }))).done) {
      // Held open: only the client may end it.
    }
    reader.releaseLock();
    try {
      conn.close();
    } catch {
      // Held: the stream closed it when the client hung up.
    }
  })();
  const client = await DaemonClient.connect({ socketPath: path });
  const received: string[] = [];
  client.onLine = (line) => received.push(line);
  await client.sendRaw(encoder.encode("{}\n"));
  try {
    await fn(client, received);
  } finally {
    client.close();
    await served;
    listener.close();
    Deno.removeSync(dir, { recursive: true });
  }
}

Deno.test("client: lines arrive whole however the daemon's bytes are cut (a character split across reads too)", async () => {
  const lines = [
    JSON.stringify({ method: "frame", params: { data: "héllo wörld ✓ 𝄞".repeat(3) } }),
    "{}",
    JSON.stringify({ method: "frame", params: { data: "x".repeat(70_000) } }),
    JSON.stringify({ method: "frame", params: { data: "€".repeat(40_000) } }),
  ];
  for (const piece of [1, 3, 7, 4096, 1 << 20]) {
    const bytes = encoder.encode(lines.map((line) => `${line}\n`).join(""));
    await withFakeDaemon(bytes, piece, async (client, received) => {
      await client.closedPromise;
      assert.deepEqual(received, lines, `pieces of ${piece} bytes`);
    });
  }
});

Deno.test("client: a line that is not UTF-8 ends the connection instead of reaching the caller", async () => {
  const bytes = new Uint8Array([0x7b, 0xff, 0xfe, 0x7d, 0x0a, 0x7b, 0x7d, 0x0a]);
  await withFakeDaemon(bytes, 4096, async (client, received) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<string>((resolve) => timer = setTimeout(() => resolve("still open"), 5000));
    const ended = await Promise.race([client.closedPromise.then(() => "closed"), late]);
    clearTimeout(timer);
    assert.equal(ended, "closed");
    assert.deepEqual(received, []);
  }, true);
});
