import assert from "node:assert/strict";
import { join } from "node:path";
import { concatBytes } from "../frames/mod.ts";
import { runNetRelay } from "./net_relay.ts";

/** A unix echo server that upper-cases nothing: it returns what it got, then closes after the peer's end. */
function echoServer(path: string): { listener: Deno.Listener; done: Promise<void>; accepted: () => number } {
  const listener = Deno.listen({ transport: "unix", path });
  let accepted = 0;
  const done = (async () => {
    try {
      for await (const conn of listener) {
        accepted++;
        void (async () => {
          const buffer = new Uint8Array(4096);
          try {
            for (;;) {
              const n = await conn.read(buffer);
              if (n === null) break;
              await conn.write(buffer.subarray(0, n));
            }
          } catch {
            // The relay closed it.
          } finally {
            conn.close();
          }
        })();
      }
    } catch {
      // Closed by the test.
    }
  })();
  return { listener, done, accepted: () => accepted };
}

async function readAll(conn: Deno.Conn): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const buffer = new Uint8Array(65536);
  for (;;) {
    const n = await conn.read(buffer);
    if (n === null) break;
    chunks.push(buffer.slice(0, n));
  }
  return concatBytes(chunks);
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

Deno.test("the relay pipes bytes both ways, passes a half-close, bounds connections, and stops", async () => {
  const dir = Deno.makeTempDirSync();
  const path = join(dir, "proxy.sock");
  const echo = echoServer(path);
  const port = freePort();
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => stop = resolve);
  let ready = false;
  const running = runNetRelay({
    to: path,
    pid: Deno.pid,
    stop: stopped,
    ready: () => ready = true,
    port,
    maxConnections: 2,
  });
  try {
    assert.ok(ready);
    // 1 MiB of hostile-looking bytes (no HTTP at all) comes back whole, after our half-close.
    const payload = crypto.getRandomValues(new Uint8Array(65536));
    const big = new Uint8Array(1 << 20);
    for (let i = 0; i < 16; i++) big.set(payload, i * 65536);
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    const reading = readAll(conn);
    for (let done = 0; done < big.length;) done += await conn.write(big.subarray(done));
    await conn.closeWrite();
    const back = await reading;
    conn.close();
    assert.equal(back.length, big.length);
    assert.deepEqual(back, big);

    // Two held connections are the limit: a third is closed at once (it reads EOF), after an empty
    // connection to the proxy (which records every attempt); the held ones still work.
    const a = await Deno.connect({ hostname: "127.0.0.1", port });
    const b = await Deno.connect({ hostname: "127.0.0.1", port });
    await a.write(new Uint8Array([1]));
    await b.write(new Uint8Array([2]));
    const one = new Uint8Array(1);
    assert.equal(await a.read(one), 1);
    assert.equal(await b.read(one), 1);
    const before = echo.accepted();
    const c = await Deno.connect({ hostname: "127.0.0.1", port });
    assert.equal(await c.read(new Uint8Array(1)).catch(() => null), null);
    c.close();
    for (let i = 0; i < 100 && echo.accepted() === before; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(echo.accepted(), before + 1, "the proxy saw the connection the relay did not carry");

    // Stopping closes the listener and the connections it carries.
    stop();
    await running;
    assert.equal(await a.read(one).catch(() => null), null);
    a.close();
    b.close();
    await assert.rejects(Deno.connect({ hostname: "127.0.0.1", port }));
  } finally {
    stop();
    await running.catch(() => {});
    echo.listener.close();
    await echo.done;
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("the relay ends when its sandbox's process is gone, and a dead proxy closes the client", async () => {
  const sleeper = new Deno.Command("sleep", { args: ["30"] }).spawn();
  const port = freePort();
  const running = runNetRelay({
    to: "/nonexistent/proxy.sock",
    pid: sleeper.pid,
    stop: new Promise(() => {}),
    ready: () => {},
    port,
  });
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    assert.equal(await conn.read(new Uint8Array(1)).catch(() => null), null);
    conn.close();
  } finally {
    sleeper.kill("SIGKILL");
    await sleeper.status;
  }
  // Polled every 500 ms: it returns soon after.
  await running;
  await assert.rejects(Deno.connect({ hostname: "127.0.0.1", port }));
});
