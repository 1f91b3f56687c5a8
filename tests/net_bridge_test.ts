/**
 * The namespace bridge of a network allow list, with real processes: bwrap with its own network
 * namespace, `specter net-relay` started in it through nsenter at bwrap's gate, and a unix socket outside.
 * The proxy here is a stand-in that forwards every connection to one loopback server as raw bytes (the
 * allow-list decisions are `src/net/`'s and are tested end to end in tests/net_allow_test.ts): this file
 * checks only how bytes cross the namespace boundary, and that nothing else does.
 */
import assert from "node:assert/strict";
import { createSocket } from "node:dgram";
import { join } from "node:path";
import { type SandboxOption, spawn } from "../src/session/mod.ts";
import { loadPolicy } from "../src/policy/mod.ts";
import type { Frame } from "../src/protocol/mod.ts";
import { SpecterError } from "../src/errors.ts";
import { alive, DENO, NO_SANDBOX, ROOT, sessionTest, withTempDir } from "./_helpers.ts";

const SELF = [DENO, "run", "-A", join(ROOT, "main.ts")];
const PROXY_ENV = {
  HTTP_PROXY: "http://127.0.0.1:3128",
  http_proxy: "http://127.0.0.1:3128",
  NO_PROXY: "",
  no_proxy: "",
};

/** A raw TCP server on 127.0.0.1 that answers any request with its request line as the body. */
function requestLineServer(): { port: number; seen: string[]; close(): void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const seen: string[] = [];
  void (async () => {
    try {
      for await (const conn of listener) {
        void (async () => {
          const buffer = new Uint8Array(8192);
          let head = "";
          try {
            while (!head.includes("\r\n\r\n")) {
              const n = await conn.read(buffer);
              if (n === null) break;
              head += new TextDecoder().decode(buffer.subarray(0, n));
            }
            const line = head.split("\r\n")[0] ?? "";
            seen.push(line);
            const body = `line=${line}\n`;
            await conn.write(
              new TextEncoder().encode(
                `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
              ),
            );
          } catch {
            // The client went away.
          } finally {
            conn.close();
          }
        })();
      }
    } catch {
      // Closed.
    }
  })();
  return { port: (listener.addr as Deno.NetAddr).port, seen, close: () => listener.close() };
}

/** The stand-in proxy: each unix connection piped raw to 127.0.0.1:port (no decision at all). */
function forwarder(path: string, port: number): { accepted: () => number; close(): void } {
  const listener = Deno.listen({ transport: "unix", path });
  let accepted = 0;
  void (async () => {
    try {
      for await (const conn of listener) {
        accepted++;
        void (async () => {
          const upstream = await Deno.connect({ hostname: "127.0.0.1", port });
          await Promise.all([
            conn.readable.pipeTo(upstream.writable).catch(() => {}),
            upstream.readable.pipeTo(conn.writable).catch(() => {}),
          ]);
        })().catch(() => conn.close());
      }
    } catch {
      // Closed.
    }
  })();
  return { accepted: () => accepted, close: () => listener.close() };
}

/** The `basic` preset (system programs readable) in `dir`, network off as the relay's sandbox keeps it. */
function basic(dir: string): SandboxOption {
  const acks = { unsafeWrite: false, network: false };
  return {
    mode: "auto",
    policy: loadPolicy("basic", { workspace: dir, home: Deno.env.get("HOME") ?? "/", acks }),
  };
}

function relayPids(socketPath: string): number[] {
  const pids: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).split("\0");
      if (cmdline.includes("net-relay") && cmdline.includes(socketPath)) pids.push(Number(entry.name));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

async function outputOf(frames: AsyncIterable<Frame>): Promise<{ text: string; exit: Frame | null }> {
  let text = "";
  let exit: Frame | null = null;
  for await (const frame of frames) {
    if (frame.type === "stdout") text += frame.data;
    if (frame.type === "exit") exit = frame;
  }
  return { text, exit };
}

sessionTest(
  "a sandbox reaches the proxy only through the relay: HTTP through it, nothing direct",
  async () => {
    await withTempDir(async (dir) => {
      const server = requestLineServer();
      const udp = createSocket("udp4");
      let datagrams = 0;
      udp.on("message", () => datagrams++);
      await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve));
      const udpPort = udp.address().port;
      const socketPath = join(dir, "proxy.sock");
      const proxy = forwarder(socketPath, server.port);
      const p = server.port;
      const script = [
        `curl -sS -m 10 http://localhost:${p}/curl`,
        `/usr/bin/python3 -c 'import urllib.request as u; print(u.urlopen("http://vm:${p}/py", timeout=10).read().decode(), end="")'`,
        `curl -sS -m 3 --noproxy '*' http://127.0.0.1:${p}/direct; echo "direct=$?"`,
        `/usr/bin/python3 -c 'import socket
try:
    socket.create_connection(("127.0.0.1", ${p}), timeout=3); print("socket=connected")
except OSError as e: print("socket=refused", type(e).__name__)'`,
        `/usr/bin/python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"leak", ("127.0.0.1", ${udpPort})); print("udp=sent")'`,
        `getent hosts example.com; echo "getent=$?"`,
      ].join("\n");
      const session = spawn({
        argv: ["/bin/sh", "-c", script],
        cwd: dir,
        sandbox: basic(dir),
        env: PROXY_ENV,
        tty: false,
        netRelay: { command: SELF, socketPath },
      });
      const { text, exit } = await outputOf(session.frames());
      try {
        assert.ok(exit !== null && exit.type === "exit" && exit.code === 0, text);
        // Through the relay and the (stand-in) proxy: the absolute-form request line of a proxy client.
        assert.match(text, new RegExp(`line=GET http://localhost:${p}/curl HTTP/1.1`));
        assert.match(text, new RegExp(`line=GET http://vm:${p}/py HTTP/1.1`));
        // Directly: the sandbox's loopback has no server on that port, and there is no other interface.
        assert.match(text, /direct=7\b/);
        assert.match(text, /socket=refused ConnectionRefusedError/);
        assert.match(text, /getent=2\b/);
        assert.equal(server.seen.length, 2, JSON.stringify(server.seen));
        assert.equal(proxy.accepted(), 2);
        // The datagram went to the sandbox's own loopback: the host's listener got nothing.
        assert.match(text, /udp=sent/);
        await new Promise((resolve) => setTimeout(resolve, 300));
        assert.equal(datagrams, 0);
        // The relay ends with the session: nothing is left behind.
        const deadline = performance.now() + 5000;
        while (relayPids(socketPath).length > 0 && performance.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        assert.deepEqual(relayPids(socketPath), []);
      } finally {
        udp.close();
        proxy.close();
        server.close();
      }
    });
  },
  60_000,
);

function spawnError(fn: () => unknown): SpecterError {
  try {
    fn();
  } catch (caught: unknown) {
    assert.ok(caught instanceof SpecterError, String(caught));
    return caught;
  }
  assert.fail("spawn did not throw");
}

sessionTest("a relay that does not start is E_SANDBOX_NETWORK, and the sandbox is gone", async () => {
  await withTempDir((dir) => {
    const socketPath = join(dir, "proxy.sock");
    // `false` exits at once instead of listening.
    const error = spawnError(() =>
      spawn({
        argv: ["/bin/true"],
        cwd: dir,
        sandbox: basic(dir),
        tty: false,
        netRelay: { command: ["/bin/false"], socketPath },
      })
    );
    assert.equal(error.code, "E_SANDBOX_NETWORK");
    assert.match(error.message, /exited before it listened/);
    const pid = (error.details as { sandbox_pid?: number } | undefined)?.sandbox_pid;
    assert.equal(typeof pid, "number");
    assert.equal(alive(pid!), false);
    // Without bwrap there is no namespace to bridge into: refused, never run with the host's network.
    const unsandboxed = spawnError(() =>
      spawn({
        argv: ["/bin/true"],
        cwd: dir,
        sandbox: NO_SANDBOX,
        tty: false,
        netRelay: { command: SELF, socketPath },
      })
    );
    assert.equal(unsandboxed.code, "E_SANDBOX_NETWORK");
    return Promise.resolve();
  });
});
