/**
 * The proxy against real loopback servers (a raw echo server, Deno.serve), spoken to over its real unix
 * socket: what it allows, what it refuses and how, what each connection's event says.
 */
import assert from "node:assert/strict";
import { AUDIT_FILE, AuditLog, verifyChain } from "../artifacts/mod.ts";
import { netAuditFields, NetEventSchema } from "../protocol/mod.ts";
import type { SpecterError } from "../errors.ts";
import {
  ask,
  closedPort,
  connectProxy,
  echoServer,
  httpServer,
  readAll,
  readResponseHead,
  startTestProxy,
} from "./_testing.ts";
import { NetProxy } from "./net_proxy.ts";
import { writeAll } from "./tunnel.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

Deno.test("CONNECT to an allowed host:port: 200, bytes flow both ways, the event counts them", async () => {
  await using echo = echoServer();
  await using t = await startTestProxy([`127.0.0.1:${echo.port}`]);
  const conn = await connectProxy(t.proxy);
  // The first tunnelled bytes come in the same write as the head: they are passed on too.
  await writeAll(conn, encoder.encode(`CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\nHost: x\r\n\r\nfirst-`));
  assert.equal(await readResponseHead(conn), "HTTP/1.1 200 Connection established\r\n\r\n");
  const payload = new Uint8Array(300_000).map((_, i) => (i * 7) & 0xff);
  const reading = readAll(conn);
  await writeAll(conn, payload);
  await conn.closeWrite();
  const echoed = await reading;
  conn.close();
  assert.equal(echoed.length, 6 + payload.length);
  assert.equal(decoder.decode(echoed.subarray(0, 6)), "first-");
  assert.ok(echoed.subarray(6).every((b, i) => b === payload[i]), "the bytes came back unchanged");
  const event = NetEventSchema.parse(await t.nextEvent());
  assert.equal(event.decision, "allowed");
  assert.equal(event.method, "CONNECT");
  assert.equal(event.host, "127.0.0.1");
  assert.equal(event.port, echo.port);
  assert.equal(event.rule, `127.0.0.1:${echo.port}`);
  assert.equal(event.reason, null);
  assert.equal(event.address, "127.0.0.1");
  assert.equal(event.bytes_up, 6 + payload.length);
  assert.equal(event.bytes_down, 6 + payload.length);
  assert.ok(event.duration_ms > 0);
  assert.equal(t.proxy.connections, 0);
});

Deno.test("CONNECT to a host no rule names: 403 naming host:port and the policy, a refused event", async () => {
  await using echo = echoServer();
  await using t = await startTestProxy(["registry.npmjs.org", "*.pythonhosted.org:443"]);
  const answer = await ask(t.proxy, `CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\n\r\n`);
  assert.match(answer, /^HTTP\/1\.1 403 Forbidden\r\n/);
  assert.match(answer, /\r\nX-Proxy-Error: blocked-by-allowlist\r\n/);
  assert.match(answer, /\r\nConnection: close\r\n/);
  const body = answer.slice(answer.indexOf("\r\n\r\n") + 4);
  assert.equal(
    body,
    `Specter's network policy "test-policy" does not allow "127.0.0.1:${echo.port}"; allowed: ` +
      `"registry.npmjs.org", "*.pythonhosted.org:443"\n`,
  );
  const event = NetEventSchema.parse(await t.nextEvent());
  assert.deepEqual(
    { ...event, ts: 0, duration_ms: 0 },
    {
      ts: 0,
      event: "net",
      decision: "refused",
      method: "CONNECT",
      host: "127.0.0.1",
      port: echo.port,
      rule: null,
      reason: "no rule allows it",
      address: null,
      bytes_up: 0,
      bytes_down: 0,
      duration_ms: 0,
    },
  );
});

Deno.test("another port of an allowed host is refused; a closed allowed port is 502", async () => {
  await using echo = echoServer();
  const closed = closedPort();
  await using t = await startTestProxy([`127.0.0.1:${echo.port}`, `localhost:${closed}`]);
  const other = await ask(t.proxy, `CONNECT 127.0.0.1:${echo.port + 1} HTTP/1.1\r\n\r\n`);
  assert.match(other, /^HTTP\/1\.1 403 Forbidden\r\n[^]*blocked-by-allowlist/);
  assert.equal((await t.nextEvent()).decision, "refused");
  const down = await ask(t.proxy, `CONNECT localhost:${closed} HTTP/1.1\r\n\r\n`);
  assert.match(down, /^HTTP\/1\.1 502 Bad Gateway\r\n[^]*X-Proxy-Error: connect-failed/);
  const event = await t.nextEvent();
  assert.equal(event.decision, "allowed", "the policy allowed it; the network refused it");
  assert.equal(event.rule, `localhost:${closed}`);
  assert.equal(event.address, "127.0.0.1");
  assert.match(event.reason ?? "", /connecting to "127\.0\.0\.1" port \d+ failed/);
});

Deno.test("plain GET and POST: origin form, Host from the URL, proxy headers dropped, bodies both ways", async () => {
  await using http = httpServer();
  await using t = await startTestProxy([`localhost:${http.port}`]);
  const answer = await ask(
    t.proxy,
    `GET http://LOCALHOST:${http.port}/a/b?c=d HTTP/1.1\r\nHost: evil.test\r\nProxy-Authorization: Basic eA==\r\n` +
      `Proxy-Connection: keep-alive\r\nUser-Agent: t\r\n\r\n`,
  );
  assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
  const seen = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));
  assert.equal(seen.method, "GET");
  assert.equal(seen.path, "/a/b?c=d");
  assert.equal(seen.headers.host, `localhost:${http.port}`, "the checked authority, never the client's Host");
  assert.equal(seen.headers["proxy-authorization"], undefined);
  assert.equal(seen.headers["proxy-connection"], undefined);
  assert.equal(seen.headers["user-agent"], "t");
  const event = await t.nextEvent();
  assert.equal(event.decision, "allowed");
  assert.equal(event.method, "GET");
  assert.equal(event.host, "localhost");
  assert.equal(event.address, "127.0.0.1");
  assert.ok(event.bytes_up > 40 && event.bytes_down === encoder.encode(answer).length, JSON.stringify(event));

  const body = "x".repeat(100_000);
  const posted = await ask(
    t.proxy,
    `POST http://localhost:${http.port}/up HTTP/1.1\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  );
  assert.equal(JSON.parse(posted.slice(posted.indexOf("\r\n\r\n") + 4)).body, body);
  assert.ok((await t.nextEvent()).bytes_up > body.length);
});

Deno.test("plain HTTP is one request per connection: bytes pipelined after its body never reach the server", async () => {
  // A raw server that takes what comes for 300 ms after the first bytes, then answers it back and closes.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const serving = (async () => {
    for await (const conn of listener) {
      const got = await readFor(conn, 300);
      const text = `HTTP/1.1 200 OK\r\nContent-Length: ${got.length}\r\nConnection: close\r\n\r\n`;
      await writeAll(conn, new Uint8Array([...encoder.encode(text), ...got])).catch(() => {});
      conn.close();
    }
  })().catch(() => {});
  await using t = await startTestProxy([`127.0.0.1:${port}`]);
  const pipelined = `GET http://127.0.0.1:${port}/second HTTP/1.1\r\nHost: other.example\r\n\r\n`;
  for (const [first, body] of [["GET", ""], ["POST", "0123456789"]] as const) {
    const length = first === "POST" ? `Content-Length: ${body.length}\r\n` : "";
    const answer = await ask(
      t.proxy,
      `${first} http://127.0.0.1:${port}/first HTTP/1.1\r\n${length}\r\n${body}${pipelined}`,
    );
    const seen = answer.slice(answer.indexOf("\r\n\r\n") + 4);
    assert.equal(
      seen,
      `${first} /first HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${length}Connection: close\r\n\r\n${body}`,
    );
    assert.equal((await t.nextEvent()).bytes_up, encoder.encode(seen).length);
  }
  listener.close();
  await serving;
});

/** Reads what comes within `ms` of the first byte. */
async function readFor(conn: Deno.Conn, ms: number): Promise<Uint8Array> {
  const out: number[] = [];
  const buffer = new Uint8Array(4096);
  let until = Infinity;
  for (;;) {
    const left = until - performance.now();
    if (left <= 0) break;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const n = await Promise.race([
      conn.read(buffer),
      new Promise<"late">((resolve) => timer = setTimeout(() => resolve("late"), Math.min(left, 60_000))),
    ]);
    clearTimeout(timer);
    if (n === "late" || n === null) break;
    out.push(...buffer.subarray(0, n));
    if (until === Infinity) until = performance.now() + ms;
  }
  return new Uint8Array(out);
}

Deno.test("plain GET to a host no rule names is 403; https:// in absolute form is 400 (use CONNECT)", async () => {
  await using http = httpServer();
  await using t = await startTestProxy([`localhost:${http.port}`]);
  const refused = await ask(t.proxy, `GET http://127.0.0.1:${http.port}/ HTTP/1.1\r\n\r\n`);
  assert.match(
    refused,
    /^HTTP\/1\.1 403 Forbidden\r\n[^]*blocked-by-allowlist[^]*does not allow "127\.0\.0\.1:\d+"/,
  );
  const event = await t.nextEvent();
  assert.equal(event.decision, "refused");
  assert.equal(event.method, "GET");
  const https = await ask(t.proxy, `GET https://localhost:${http.port}/ HTTP/1.1\r\n\r\n`);
  assert.match(https, /^HTTP\/1\.1 400 Bad Request\r\n[^]*bad-request[^]*HTTPS goes through CONNECT/);
  assert.match((await t.nextEvent()).reason ?? "", /^a bad request: https:\/\//);
});

Deno.test("a name that resolves to loopback is refused unless the rule is localhost or the address", async () => {
  await using echo = echoServer();
  const asked: string[] = [];
  const resolve = (host: string) => {
    asked.push(host);
    return Promise.resolve(host === "mixed.example" ? ["10.0.0.7", "127.0.0.1"] : ["127.0.0.1"]);
  };
  await using t = await startTestProxy(
    [`api.example:${echo.port}`, `mixed.example:${echo.port}`, `127.0.0.1:${echo.port}`],
    { resolve },
  );
  for (const name of ["api.example", "mixed.example"]) {
    const answer = await ask(t.proxy, `CONNECT ${name}:${echo.port} HTTP/1.1\r\n\r\n`);
    assert.match(answer, /^HTTP\/1\.1 403 Forbidden\r\n[^]*X-Proxy-Error: blocked-by-address/);
    assert.match(answer, /resolved to "[\d.]+"[^]*DNS rebinding/);
    const event = await t.nextEvent();
    assert.equal(event.decision, "refused");
    assert.equal(event.rule, `${name}:${echo.port}`);
    assert.match(event.address ?? "", /^(10\.0\.0\.7|127\.0\.0\.1)$/);
  }
  // The literal address is allowed, and needs no lookup.
  const literal = await connectProxy(t.proxy);
  await writeAll(literal, encoder.encode(`CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\n\r\n`));
  assert.match(await readResponseHead(literal), /^HTTP\/1\.1 200 /);
  literal.close();
  assert.equal((await t.nextEvent()).decision, "allowed");
  assert.deepEqual(asked, ["api.example", "mixed.example"]);
});

Deno.test("IPv6: a bracketed literal rule allows exactly that address; its IPv4-mapped twin is another host", async () => {
  await using echo = echoServer("::1");
  await using t = await startTestProxy([`[::1]:${echo.port}`]);
  const conn = await connectProxy(t.proxy);
  await writeAll(conn, encoder.encode(`CONNECT [0:0::1]:${echo.port} HTTP/1.1\r\n\r\nv6`));
  assert.match(await readResponseHead(conn), /^HTTP\/1\.1 200 /);
  await conn.closeWrite();
  assert.equal(decoder.decode(await readAll(conn)), "v6");
  conn.close();
  const event = await t.nextEvent();
  assert.deepEqual([event.decision, event.host, event.address, event.rule], [
    "allowed",
    "::1",
    "::1",
    `[::1]:${echo.port}`,
  ]);
  const mapped = await ask(t.proxy, `CONNECT [::ffff:127.0.0.1]:${echo.port} HTTP/1.1\r\n\r\n`);
  assert.match(mapped, /^HTTP\/1\.1 403 [^]*does not allow "\[::ffff:7f00:1\]:\d+"/);
  assert.equal((await t.nextEvent()).decision, "refused");
});

Deno.test("real getaddrinfo: vm (127.0.0.1 in /etc/hosts) is refused, localhost is allowed", async () => {
  await using echo = echoServer();
  await using t = await startTestProxy([`vm:${echo.port}`, `localhost:${echo.port}`]);
  const refused = await ask(t.proxy, `CONNECT vm:${echo.port} HTTP/1.1\r\n\r\n`);
  assert.match(refused, /^HTTP\/1\.1 403 Forbidden\r\n[^]*blocked-by-address[^]*resolved to "127\.0\.0\.1"/);
  const event = await t.nextEvent();
  assert.deepEqual([event.decision, event.rule, event.address], ["refused", `vm:${echo.port}`, "127.0.0.1"]);
  const conn = await connectProxy(t.proxy);
  await writeAll(conn, encoder.encode(`CONNECT localhost:${echo.port} HTTP/1.1\r\n\r\nping`));
  assert.match(await readResponseHead(conn), /^HTTP\/1\.1 200 /);
  await conn.closeWrite();
  assert.equal(decoder.decode(await readAll(conn)), "ping");
  conn.close();
  const allowed = await t.nextEvent();
  assert.deepEqual([allowed.decision, allowed.address, allowed.bytes_down], ["allowed", "127.0.0.1", 4]);
});

Deno.test("a resolver that fails is 502 resolve-failed; one that answers garbage is no address", async () => {
  const resolve = (host: string) =>
    host === "broken.example"
      ? Promise.reject(Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" }))
      : Promise.resolve(["not an address", "::ffff:127.0.0.1x"]);
  await using t = await startTestProxy(["broken.example", "garbage.example"], { resolve });
  const broken = await ask(t.proxy, "CONNECT broken.example:443 HTTP/1.1\r\n\r\n");
  assert.match(broken, /^HTTP\/1\.1 502 Bad Gateway\r\n[^]*resolve-failed[^]*ENOTFOUND/);
  assert.match((await t.nextEvent()).reason ?? "", /"broken\.example" did not resolve: .*ENOTFOUND/);
  const garbage = await ask(t.proxy, "GET http://garbage.example/ HTTP/1.1\r\n\r\n");
  assert.match(garbage, /^HTTP\/1\.1 502 [^]*resolved to no address/);
  assert.equal((await t.nextEvent()).address, null);
});

Deno.test("a head over 16 KiB is 431; malformed heads are 400; the proxy serves on", async () => {
  await using echo = echoServer();
  await using t = await startTestProxy([`127.0.0.1:${echo.port}`]);
  const flood = await ask(t.proxy, `CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\nX: ${"a".repeat(20_000)}`);
  assert.match(flood, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n[^]*head-too-large/);
  const event = await t.nextEvent();
  assert.deepEqual([event.decision, event.reason], ["refused", "a request head over 16384 bytes"]);
  const bad = [
    "GET / HTTP/1.1\r\n\r\n",
    "\r\n\r\n",
    "CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n",
    `CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\n folded\r\n\r\n`,
    `CONNECT 127.0.0.1:${echo.port} HTTP/1.1\nHost: x\r\n\r\n`,
    `CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\nX\0: y\r\n\r\n`,
    "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
    "GET http://user@127.0.0.1/ HTTP/1.1\r\n\r\n",
    "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
  ];
  for (const head of bad) {
    const answer = await ask(t.proxy, head);
    assert.match(
      answer,
      /^HTTP\/1\.1 400 Bad Request\r\nX-Proxy-Error: bad-request\r\n/,
      JSON.stringify(head),
    );
    const refused = await t.nextEvent();
    assert.equal(refused.decision, "refused");
    assert.match(refused.reason ?? "", /^a bad request: /);
  }
  // Bytes that never make a head, then the end: no answer, an event.
  assert.equal(await ask(t.proxy, "\xff\xfe\x00garbage", true), "");
  assert.equal((await t.nextEvent()).reason, "closed before the end of its request head");
  assert.equal(await ask(t.proxy, "", true), "");
  assert.equal((await t.nextEvent()).reason, "closed without a request");
  // After all that, an allowed tunnel still works.
  const conn = await connectProxy(t.proxy);
  await writeAll(conn, encoder.encode(`CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\n\r\nok`));
  assert.match(await readResponseHead(conn), /^HTTP\/1\.1 200 /);
  await conn.closeWrite();
  assert.equal(decoder.decode(await readAll(conn)), "ok");
  conn.close();
  assert.equal((await t.nextEvent()).decision, "allowed");
});

Deno.test("a client that stalls in its head, or sends it a byte at a time, is cut at the deadline", async () => {
  await using t = await startTestProxy(["localhost"], { headTimeoutMs: 400 });
  const stalled = await connectProxy(t.proxy);
  await writeAll(stalled, encoder.encode("CONNECT localhost:1 HTTP/1.1\r\n"));
  const started = performance.now();
  const answer = decoder.decode(await readAll(stalled));
  stalled.close();
  assert.match(answer, /^HTTP\/1\.1 408 Request Timeout\r\n[^]*head-timeout/);
  assert.ok(performance.now() - started >= 300, "not before its deadline");
  const event = await t.nextEvent();
  assert.equal(event.reason, "no whole request head within 400 ms");
  assert.ok(event.duration_ms >= 390);
  // A byte every 50 ms keeps the head coming but does not move the deadline.
  const trickle = await connectProxy(t.proxy);
  const reading = readAll(trickle);
  let sent = 0;
  for (const byte of encoder.encode("GET http://localhost/ HTTP/1.1\r\nX: " + "y".repeat(200))) {
    try {
      await trickle.write(new Uint8Array([byte]));
    } catch {
      break; // Cut: the proxy closed it.
    }
    sent++;
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (performance.now() - started > 5_000) break;
  }
  assert.match(decoder.decode(await reading), /^HTTP\/1\.1 408 /);
  trickle.close();
  assert.ok(sent < 100, `${sent} bytes were taken after the deadline`);
  assert.equal((await t.nextEvent()).reason, "no whole request head within 400 ms");
});

Deno.test("beyond maxConnections a client gets 503; close() ends the rest and emits their events first", async () => {
  await using echo = echoServer();
  await using t = await startTestProxy([`127.0.0.1:${echo.port}`], { maxConnections: 2 });
  // One idle in its head, one an open tunnel.
  const idle = await connectProxy(t.proxy);
  const tunnel = await connectProxy(t.proxy);
  await writeAll(tunnel, encoder.encode(`CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\n\r\nabc`));
  assert.match(await readResponseHead(tunnel), /^HTTP\/1\.1 200 /);
  const three = new Uint8Array(3);
  assert.equal(await tunnel.read(three), 3);
  assert.equal(t.proxy.connections, 2);
  const third = await ask(t.proxy, `CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\n\r\n`);
  assert.match(third, /^HTTP\/1\.1 503 Service Unavailable\r\n[^]*too-many-connections[^]*at most 2 at once/);
  const busy = await t.nextEvent();
  assert.deepEqual([busy.decision, busy.reason, busy.method], ["refused", "too many connections", ""]);
  assert.equal(t.events.length, 1, "the two open connections have no event yet");
  await t.proxy.close();
  assert.equal(t.events.length, 3, "close() resolved after both events");
  const [first, second] = t.events.slice(1).sort((a, b) => a.bytes_up - b.bytes_up);
  assert.deepEqual([first!.decision, first!.reason, first!.method], ["refused", "the proxy stopped", ""]);
  assert.deepEqual(
    [second!.decision, second!.reason, second!.bytes_up, second!.bytes_down],
    ["allowed", "the proxy stopped", 3, 3],
  );
  assert.equal(t.proxy.connections, 0);
  assert.equal(decoder.decode(await readAll(idle)), "", "the idle client sees its end");
  idle.close();
  tunnel.close();
  await assert.rejects(Deno.lstat(t.proxy.socketPath), Deno.errors.NotFound, "the socket is removed");
});

Deno.test("a run takes at most maxTotalConnections: later ones are closed unanswered, counted in one record", async () => {
  // A program that connects and closes in a loop made one ~320-byte audit record each (1,400 a second
  // here): its run's audit log passed the 64 MiB that `audit verify` and a resuming daemon read in about
  // two and a half minutes, and kept growing. The total is bounded like the connections at once.
  await using t = await startTestProxy([], { maxTotalConnections: 3 });
  for (let i = 0; i < 3; i++) {
    assert.match(await ask(t.proxy, "CONNECT a.example:443 HTTP/1.1\r\n\r\n"), /^HTTP\/1\.1 403 /);
  }
  const fourth = await ask(t.proxy, "CONNECT a.example:443 HTTP/1.1\r\n\r\n");
  assert.match(fourth, /^HTTP\/1\.1 503 [^]*too-many-connections[^]*at most 3 connections per run/);
  for (let i = 0; i < 5; i++) {
    const conn = await connectProxy(t.proxy);
    try {
      await writeAll(conn, encoder.encode("CONNECT a.example:443 HTTP/1.1\r\n\r\n"));
    } catch {
      // Closed by the proxy already (broken pipe): what is read below says the same.
    }
    assert.equal(decoder.decode(await readAll(conn)), "", "closed unanswered");
    conn.close();
  }
  assert.equal(t.events.length, 4, "one record each up to the limit, one for the connection that met it");
  assert.equal(t.events[3]!.reason, "the run's limit of 3 connections");
  await t.proxy.close();
  assert.equal(t.events.length, 5);
  const summary = t.events[4]!;
  assert.deepEqual([summary.decision, summary.host, summary.port, summary.bytes_up], ["refused", "", 0, 0]);
  assert.equal(
    summary.reason,
    "5 later connection(s) closed unanswered past the run's limit of 3 connections",
  );
  await assert.rejects(
    NetProxy.start({
      socketPath: "/nonexistent/x.sock",
      rules: [],
      policyName: "p",
      onEvent: () => {},
      maxTotalConnections: 0,
    }),
    (e: unknown) => (e as SpecterError).code === "E_USAGE",
  );
});

Deno.test("close() while a name is being resolved ends the wait and reports the connection", async () => {
  let asked = 0;
  const resolve = () => {
    asked++;
    return new Promise<string[]>(() => {}); // A resolver that never answers.
  };
  await using t = await startTestProxy(["slow.example"], { resolve });
  const conn = await connectProxy(t.proxy);
  await writeAll(conn, encoder.encode("CONNECT slow.example:443 HTTP/1.1\r\n\r\n"));
  while (asked === 0) await new Promise((resolve) => setTimeout(resolve, 10));
  await t.proxy.close();
  assert.equal(t.events.length, 1);
  const event = t.events[0]!;
  assert.deepEqual([event.decision, event.rule, event.reason], [
    "allowed",
    "slow.example",
    "the proxy stopped",
  ]);
  assert.equal(decoder.decode(await readAll(conn)), "");
  conn.close();
});

Deno.test("NetProxy.start: a taken path is E_SANDBOX_START, a bad limit E_USAGE", async () => {
  await using t = await startTestProxy([]);
  const options = { socketPath: t.proxy.socketPath, rules: [], policyName: "p", onEvent: () => {} };
  await assert.rejects(
    NetProxy.start(options),
    (e: unknown) => (e as SpecterError).code === "E_SANDBOX_START",
  );
  await assert.rejects(
    NetProxy.start({ ...options, socketPath: "/nonexistent/x.sock" }),
    (e: unknown) => (e as SpecterError).code === "E_SANDBOX_START",
  );
  await assert.rejects(
    NetProxy.start({ ...options, maxConnections: 0 }),
    (e: unknown) => (e as SpecterError).code === "E_USAGE",
  );
  // An onEvent that throws does not stop the proxy.
  const dir = await Deno.makeTempDir();
  const throwing = await NetProxy.start({
    ...options,
    socketPath: `${dir}/s.sock`,
    onEvent: () => {
      throw new Error("the caller's bug");
    },
  });
  for (let i = 0; i < 2; i++) {
    assert.match(await ask(throwing, "CONNECT a.example:1 HTTP/1.1\r\n\r\n"), /^HTTP\/1\.1 403 /);
  }
  await throwing.close();
  await throwing.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("the events go into a run's audit log as net records and its chain verifies", async () => {
  await using echo = echoServer();
  const dir = await Deno.makeTempDir({ prefix: "specter-net-audit-" });
  const audit = AuditLog.open(dir, "run-net");
  try {
    await using t = await startTestProxy([`127.0.0.1:${echo.port}`], {
      onEvent: (event) => audit.record("net", netAuditFields(event)),
    });
    assert.match(await ask(t.proxy, "CONNECT refused.example:443 HTTP/1.1\r\n\r\n"), /^HTTP\/1\.1 403 /);
    const conn = await connectProxy(t.proxy);
    await writeAll(conn, encoder.encode(`CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\n\r\nhi`));
    await readResponseHead(conn);
    await conn.closeWrite();
    assert.equal(decoder.decode(await readAll(conn)), "hi");
    conn.close();
    await t.proxy.close();
  } finally {
    audit.close();
  }
  assert.equal(audit.failure, null);
  const bytes = await Deno.readFile(`${dir}/${AUDIT_FILE}`);
  assert.equal(verifyChain(bytes).records, 2);
  const records = decoder.decode(bytes).trim().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(
    records.map((r) => [r.event, r.decision, r.host, r.bytes_up, r.bytes_down]),
    [["net", "refused", "refused.example", 0, 0], ["net", "allowed", "127.0.0.1", 2, 2]],
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("clients that vanish at every step end their own connection only, each with one event", async () => {
  await using echo = echoServer();
  await using http = httpServer();
  await using t = await startTestProxy([`127.0.0.1:${echo.port}`, `127.0.0.1:${http.port}`]);
  const connect = encoder.encode(`CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\n\r\n`);
  const behaviours: ((conn: Deno.Conn) => Promise<void>)[] = [
    async () => {}, // Connects and closes at once.
    async (conn) => void await conn.write(connect.subarray(0, 10)), // Half a request line.
    async (conn) => void await conn.write(connect), // The head, then gone before the 200.
    async (conn) => {
      // Established, sends 1 MB it never reads the echo of.
      await writeAll(conn, connect);
      await readResponseHead(conn);
      await writeAll(conn, new Uint8Array(1 << 20)).catch(() => {});
    },
    async (conn) => {
      // A plain POST that promises a body it never sends, then closes.
      await writeAll(
        conn,
        encoder.encode(`POST http://127.0.0.1:${http.port}/ HTTP/1.1\r\nContent-Length: 99\r\n\r\nab`),
      );
    },
  ];
  const rounds = 4;
  await Promise.all(
    Array.from({ length: rounds }, () => behaviours).flat().map(async (behave) => {
      const conn = await connectProxy(t.proxy);
      try {
        await behave(conn);
      } finally {
        conn.close();
      }
    }),
  );
  const until = Date.now() + 10_000;
  while (t.events.length < rounds * behaviours.length && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.equal(t.events.length, rounds * behaviours.length, "one event per connection");
  for (const event of t.events) NetEventSchema.parse(event);
  assert.equal(t.proxy.connections, 0);
  // And the proxy serves on.
  assert.match(
    await ask(t.proxy, `GET http://127.0.0.1:${http.port}/after HTTP/1.1\r\n\r\n`),
    /^HTTP\/1\.1 200 /,
  );
});
