/**
 * The network proxy with the clients programs actually use: curl (plain HTTP, `--proxytunnel` CONNECT,
 * the `http_proxy` variable) and Python's urllib, through a plain TCP→unix relay as the sandbox's relay
 * does it (the relay inside the network namespace is tested with the sandbox; here it is a loop in the
 * test). Loopback servers only.
 */
import assert from "node:assert/strict";
import { NetProxy } from "../src/net/mod.ts";
import { parseNetRule } from "../src/policy/mod.ts";
import type { NetEvent } from "../src/protocol/mod.ts";

/** A TCP listener on 127.0.0.1 that pipes each connection to the proxy's unix socket. */
function relay(socketPath: string): { port: number } & AsyncDisposable {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const pipes = new Set<Promise<unknown>>();
  const accepting = (async () => {
    for await (const tcp of listener) {
      const pipe = Deno.connect({ transport: "unix", path: socketPath }).then((unix) =>
        Promise.allSettled([tcp.readable.pipeTo(unix.writable), unix.readable.pipeTo(tcp.writable)])
      ).catch(() => tcp.close());
      pipes.add(pipe);
      pipe.finally(() => pipes.delete(pipe));
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    async [Symbol.asyncDispose]() {
      listener.close();
      await accepting;
      await Promise.allSettled([...pipes]);
    },
  };
}

async function run(argv: string[], env: Record<string, string> = {}) {
  const output = await new Deno.Command(argv[0]!, {
    args: argv.slice(1),
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: Deno.env.get("HOME") ?? "/", ...env },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

Deno.test("curl and Python urllib through the proxy: an allowed localhost port answers, the rest is refused", async () => {
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request) => new Response(`hello ${new URL(request.url).pathname} via ${request.headers.get("host")}\n`),
  );
  const port = server.addr.port;
  const dir = await Deno.makeTempDir({ prefix: "specter-net-" });
  const events: NetEvent[] = [];
  const rule = parseNetRule(`localhost:${port}`);
  assert.ok(rule.ok);
  const proxy = await NetProxy.start({
    socketPath: `${dir}/proxy.sock`,
    rules: [rule.rule],
    policyName: "preset:test",
    onEvent: (event) => events.push(event),
  });
  try {
    await using front = relay(proxy.socketPath);
    const via = `http://127.0.0.1:${front.port}`;
    const plain = await run(["curl", "-sS", "-x", via, `http://localhost:${port}/plain`]);
    assert.equal(plain.stdout, `hello /plain via localhost:${port}\n`, plain.stderr);
    const tunnel = await run(["curl", "-sS", "-p", "-x", via, `http://localhost:${port}/tunnel`]);
    assert.equal(tunnel.stdout, `hello /tunnel via localhost:${port}\n`, tunnel.stderr);
    // As a program in the sandbox does it: the proxy from the environment, nothing on the command line.
    const fromEnv = await run(["curl", "-sS", `http://localhost:${port}/env`], { http_proxy: via });
    assert.equal(fromEnv.stdout, `hello /env via localhost:${port}\n`, fromEnv.stderr);
    const python = await run([
      "python3",
      "-c",
      `import urllib.request; print(urllib.request.urlopen("http://localhost:${port}/py").read().decode(), end="")`,
    ], { http_proxy: via, HTTP_PROXY: via });
    assert.equal(python.stdout, `hello /py via localhost:${port}\n`, python.stderr);

    // Another name for the same server, and another port: refused, with the reason in the answer.
    const other = await run(["curl", "-sS", "-x", via, `http://127.0.0.1:${port}/`]);
    assert.match(other.stdout, /network policy "preset:test" does not allow "127\.0\.0\.1:\d+"/);
    const otherPort = await run(["curl", "-sS", "-p", "-x", via, `http://localhost:${port + 1}/`]);
    assert.equal(otherPort.code, 56, otherPort.stderr);
    assert.match(otherPort.stderr, /CONNECT tunnel failed, response 403/);
    const pythonRefused = await run([
      "python3",
      "-c",
      `import urllib.request, urllib.error
try:
    urllib.request.urlopen("http://127.0.0.1:${port}/")
except urllib.error.HTTPError as e:
    print(e.code, e.headers["X-Proxy-Error"])`,
    ], { http_proxy: via });
    assert.equal(pythonRefused.stdout.trim(), "403 blocked-by-allowlist", pythonRefused.stderr);
  } finally {
    await proxy.close();
    await Deno.remove(dir, { recursive: true });
  }
  const summary = events.map((e) =>
    `${e.decision} ${e.method} ${e.host}:${
      e.port === port ? "PORT" : e.port === port + 1 ? "PORT+1" : e.port
    }`
  );
  assert.deepEqual(summary, [
    "allowed GET localhost:PORT",
    "allowed CONNECT localhost:PORT",
    "allowed GET localhost:PORT",
    "allowed GET localhost:PORT",
    "refused GET 127.0.0.1:PORT",
    "refused CONNECT localhost:PORT+1",
    "refused GET 127.0.0.1:PORT",
  ]);
  for (const event of events.slice(0, 4)) assert.ok(event.bytes_up > 0 && event.bytes_down > 0);
});
