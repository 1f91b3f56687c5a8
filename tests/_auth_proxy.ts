/**
 * A test-only reverse proxy for the MCP conformance suite, whose CLI cannot send headers of its own: it
 * takes each connection's request head, adds the daemon's control token as `Authorization: Bearer` (unless
 * one is there), and maps its own address in `Host` and `Origin` to the daemon's, as a reverse proxy in
 * front of the daemon would (any other Host or Origin goes through as sent, so the daemon's own DNS
 * rebinding checks still see it). Then bytes flow both ways unchanged. The daemon's checks are untouched.
 */

/** A running proxy. */
export interface AuthProxy {
  /** `http://127.0.0.1:PORT` */
  readonly origin: string;
  close(): void;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** Starts a proxy to `target` (`host:port`) that adds `token`. */
export function startAuthProxy(target: string, token: string): AuthProxy {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const own = `127.0.0.1:${(listener.addr as Deno.NetAddr).port}`;
  const owns = new Set([own, own.replace("127.0.0.1", "localhost")]);
  const [hostname, port] = [
    target.slice(0, target.lastIndexOf(":")),
    Number(target.slice(target.lastIndexOf(":") + 1)),
  ];
  const conns = new Set<Deno.Conn>();
  void (async () => {
    for await (const client of listener) {
      conns.add(client);
      // A connection that breaks ends with its own close below; the suite sees the failure itself.
      void serve(client).catch(() => undefined).finally(() => {
        // The test ends the proxy with its connections; each closes once.
        for (const conn of [client]) {
          try {
            conn.close();
          } catch {
            // Closed already.
          }
          conns.delete(conn);
        }
      });
    }
  })().catch(() => {
    // The listener closed.
  });

  async function serve(client: Deno.Conn): Promise<void> {
    let buffered = new Uint8Array();
    let end = -1;
    while (end < 0) {
      const chunk = new Uint8Array(16 * 1024);
      const n = await client.read(chunk);
      if (n === null) return;
      const joined = new Uint8Array(buffered.length + n);
      joined.set(buffered);
      joined.set(chunk.subarray(0, n), buffered.length);
      buffered = joined;
      end = headEnd(buffered);
    }
    const [first, ...headers] = decoder.decode(buffered.subarray(0, end)).split("\r\n");
    const out = headers.map((line) => {
      const [name, ...rest] = line.split(":");
      const value = rest.join(":").trim();
      const key = name!.trim().toLowerCase();
      if (key === "host" && owns.has(value.toLowerCase())) return `host: ${target}`;
      if (key === "origin" && owns.has(value.replace(/^https?:\/\//, "").toLowerCase())) {
        return `origin: http://${target}`;
      }
      return line;
    });
    if (!headers.some((l) => l.toLowerCase().startsWith("authorization:"))) {
      out.push(`authorization: Bearer ${token}`);
    }
    const head = encoder.encode([first, ...out].join("\r\n") + "\r\n\r\n");
    const rest = buffered.subarray(end + 4);
    const upstream = await Deno.connect({ hostname, port });
    conns.add(upstream);
    try {
      await upstream.write(head);
      if (rest.length > 0) await upstream.write(rest);
      // The daemon answers one request per connection and then closes: its end ends the exchange.
      // Either side may go away mid-stream (the suite cancels SSE streams): that ends the exchange.
      void client.readable.pipeTo(upstream.writable, { preventClose: true }).catch(() => undefined);
      await upstream.readable.pipeTo(client.writable, { preventClose: true }).catch(() => undefined);
    } finally {
      try {
        upstream.close();
      } catch {
        // Closed already.
      }
      conns.delete(upstream);
    }
  }

  return {
    origin: `http://${own}`,
    close() {
      listener.close();
      for (const conn of conns) {
        try {
          conn.close();
        } catch {
          // Closed already.
        }
      }
    },
  };
}

/** Where a request head's blank line starts, or -1. */
function headEnd(bytes: Uint8Array): number {
  for (let i = 3; i < bytes.length; i++) {
    if (bytes[i] === 10 && bytes[i - 1] === 13 && bytes[i - 2] === 10 && bytes[i - 3] === 13) return i - 3;
  }
  return -1;
}
