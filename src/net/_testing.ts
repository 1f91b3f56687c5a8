/**
 * What the proxy's tests share: a proxy on a socket in a fresh 0700 directory with its events collected,
 * loopback servers (a raw echo server and an HTTP server that says what it received), and a client that
 * speaks to the proxy's unix socket.
 *
 * @module
 */
import { parseNetRule } from "../policy/mod.ts";
import type { NetEvent } from "../protocol/mod.ts";
import { NetProxy, type NetProxyOptions } from "./net_proxy.ts";
import { writeAll } from "./tunnel.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A started proxy, its events as they come, and its directory. */
export interface TestProxy extends AsyncDisposable {
  readonly proxy: NetProxy;
  readonly events: NetEvent[];
  /** The next event not yet taken (waits up to 10 s for it). */
  nextEvent(): Promise<NetEvent>;
}

/** Starts a proxy with `rules` (as written) in a fresh 0700 directory; disposing closes it. */
export async function startTestProxy(
  rules: readonly string[],
  options: Partial<NetProxyOptions> = {},
): Promise<TestProxy> {
  const dir = await Deno.makeTempDir({ prefix: "specter-net-" });
  await Deno.chmod(dir, 0o700);
  const events: NetEvent[] = [];
  let taken = 0;
  let wake: (() => void) | null = null;
  const parsed = rules.map((text) => {
    const rule = parseNetRule(text);
    if (!rule.ok) throw new Error(rule.message);
    return rule.rule;
  });
  const proxy = await NetProxy.start({
    socketPath: `${dir}/proxy.sock`,
    rules: parsed,
    policyName: "test-policy",
    onEvent: (event) => {
      events.push(event);
      wake?.();
    },
    ...options,
  });
  return {
    proxy,
    events,
    async nextEvent(): Promise<NetEvent> {
      const until = Date.now() + 10_000;
      while (events.length <= taken) {
        if (Date.now() > until) throw new Error(`No event after ${taken} events`);
        let timer: ReturnType<typeof setTimeout> | undefined;
        await new Promise<void>((resolve) => {
          wake = resolve;
          timer = setTimeout(resolve, 200);
        });
        clearTimeout(timer);
        wake = null;
      }
      return events[taken++]!;
    },
    async [Symbol.asyncDispose]() {
      await proxy.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** A connection to the proxy's socket. */
export function connectProxy(proxy: NetProxy): Promise<Deno.UnixConn> {
  return Deno.connect({ transport: "unix", path: proxy.socketPath });
}

/** Reads until the end (or `limit` bytes), as bytes. */
export async function readAll(conn: Deno.Conn, limit = 64 * 1024 * 1024): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  const buffer = new Uint8Array(64 * 1024);
  for (;;) {
    let n: number | null;
    try {
      n = await conn.read(buffer);
    } catch {
      break; // Reset by the proxy: what came before it is the answer.
    }
    if (n === null) break;
    chunks.push(buffer.slice(0, n));
    length += n;
    if (length >= limit) break;
  }
  const out = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/**
 * Sends `request` to the proxy and reads the whole answer as text; `end`: then ends the sending side (a
 * client that gives up before its head is whole).
 */
export async function ask(proxy: NetProxy, request: string | Uint8Array, end = false): Promise<string> {
  const conn = await connectProxy(proxy);
  try {
    await writeAll(conn, typeof request === "string" ? encoder.encode(request) : request);
    if (end) await conn.closeWrite();
    return decoder.decode(await readAll(conn));
  } finally {
    conn.close();
  }
}

/** Reads one response head (up to CR LF CR LF) byte by byte, leaving what follows unread. */
export async function readResponseHead(conn: Deno.Conn): Promise<string> {
  const one = new Uint8Array(1);
  let text = "";
  while (!text.endsWith("\r\n\r\n")) {
    const n = await conn.read(one);
    if (n === null) break;
    text += String.fromCharCode(one[0]!);
  }
  return text;
}

/** A raw TCP echo server on `hostname` (each connection's bytes back, half-close passed on). */
export function echoServer(hostname = "127.0.0.1"): { port: number } & AsyncDisposable {
  const listener = Deno.listen({ hostname, port: 0 });
  const conns = new Set<Deno.Conn>();
  const serving = (async () => {
    for await (const conn of listener) {
      conns.add(conn);
      (async () => {
        const buffer = new Uint8Array(16 * 1024);
        try {
          for (;;) {
            const n = await conn.read(buffer);
            if (n === null) break;
            await writeAll(conn, buffer.subarray(0, n));
          }
        } catch {
          // The proxy closed it: the test is over.
        } finally {
          conns.delete(conn);
          try {
            conn.close();
          } catch {
            // Closed by the disposal.
          }
        }
      })();
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    async [Symbol.asyncDispose]() {
      listener.close();
      for (const conn of conns) {
        try {
          conn.close();
        } catch {
          // Closed already.
        }
      }
      await serving;
    },
  };
}

/** An HTTP server on 127.0.0.1 whose answer is a JSON account of the request it received. */
export function httpServer(): { port: number } & AsyncDisposable {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const body = await request.text();
    const url = new URL(request.url);
    return Response.json({
      method: request.method,
      path: url.pathname + url.search,
      headers: Object.fromEntries(request.headers),
      body,
    });
  });
  return {
    port: server.addr.port,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

/** A port nothing listens on (bound, then closed). */
export function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}
