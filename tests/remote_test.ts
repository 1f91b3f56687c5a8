/**
 * The daemon's TCP listener against real clients: tokens (none, wrong, viewer vs control, a token file
 * with scoped sessions), the Origin and Host rules, failed-attempt limits under 1 000 attempts, tokens never
 * in a log, a client that never reads, the client cap, compression, the `pty_exited` frame, TLS and the
 * non-loopback rule, and the audit log of connections.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { zstdDecompressSync } from "node:zlib";
import { withTempDir, withTimeout } from "./_helpers.ts";
import { create, specter, whereArgs } from "./_daemon.ts";
import { handshake, type RemoteDaemon, request, withRemoteDaemon, WsRpc } from "./_remote.ts";
import { FrameSchema } from "../src/protocol/mod.ts";

function remoteTest(name: string, fn: (dir: string) => Promise<void>, timeoutMs = 60_000): void {
  Deno.test({ name, sanitizeOps: false, sanitizeResources: false }, async () => {
    await withTempDir((dir) => withTimeout(fn(dir), timeoutMs, name));
  });
}

/** The remote audit log's records (after `specter audit verify` accepted its chain). */
async function remoteAudit(daemon: RemoteDaemon): Promise<Record<string, unknown>[]> {
  const dir = join(daemon.stateDir, "remote");
  const verify = await specter(["audit", "verify", dir]);
  assert.equal(verify.code, 0, verify.stderr);
  return Deno.readTextFileSync(join(dir, "audit.ndjson")).trim().split("\n").map((line) => JSON.parse(line));
}

/** A masked client text frame (what a browser sends). */
function clientFrame(text: string): Uint8Array {
  const payload = new TextEncoder().encode(text);
  const mask = crypto.getRandomValues(new Uint8Array(4));
  const header = payload.length < 126
    ? [0x81, 0x80 | payload.length]
    : [0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff];
  const out = new Uint8Array(header.length + 4 + payload.length);
  out.set(header, 0);
  out.set(mask, header.length);
  payload.forEach((byte, i) => out[header.length + 4 + i] = byte ^ mask[i % 4]!);
  return out;
}

function rss(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/** Every file under `dir` (recursively). */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) out.push(...filesUnder(path));
    else if (entry.isFile) out.push(path);
  }
  return out;
}

remoteTest(
  "remote: no token and a wrong token are refused (401, E_REMOTE_AUTH); the pages need none",
  async (dir) => {
    await withRemoteDaemon(dir, [], async (daemon) => {
      const none = await handshake(daemon);
      assert.equal(none.status, 401);
      assert.equal(none.code, "E_REMOTE_AUTH");
      const wrong = await handshake(daemon, { Authorization: "Bearer " + "x".repeat(43) });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.code, "E_REMOTE_AUTH");
      // Not a WebSocket handshake (an <img>, a plain fetch): answered, and counted as nothing.
      const plain = await request(daemon, "/v1/ws", { authorization: "Bearer " + "x".repeat(43) });
      assert.equal(plain.status, 400);
      assert.equal((await handshake(daemon, { Host: "" })).code, "E_REMOTE_HOST", "no Host at all");
      await assert.rejects(WsRpc.open(daemon, "y".repeat(43)), /refused/);
      await assert.rejects(WsRpc.open(daemon, "y".repeat(43), { via: "subprotocol" }), /refused/);
      const page = await request(daemon, "/");
      assert.equal(page.status, 200);
      assert.match(page.headers.get("content-security-policy") ?? "", /default-src 'none'/);
      assert.equal((await request(daemon, "/assets/xterm.mjs")).status, 200);
      assert.equal((await request(daemon, "/nothing")).status, 404);
      // The right token, either way a client can give it.
      for (const via of ["header", "subprotocol"] as const) {
        const rpc = await WsRpc.open(daemon, daemon.info.viewer_token!, { via });
        assert.equal((await rpc.hello()).scope, "viewer");
        rpc.close();
      }
    });
  },
);

remoteTest(
  "remote: a viewer token only watches; control drives; nobody stops the daemon over TCP",
  async (dir) => {
    await withRemoteDaemon(dir, [], async (daemon) => {
      await create(daemon, "job", ["/bin/sh", "-c", 'echo started; read line; echo "got:$line"']);
      const viewer = await WsRpc.open(daemon, daemon.info.viewer_token!);
      await viewer.hello();
      const list = await viewer.call("session.list", {});
      assert.deepEqual((list.result as { sessions: { name: string }[] }).sessions.map((s) => s.name), [
        "job",
      ]);
      const attached = await viewer.call("session.attach", { name: "job", control: true });
      assert.equal((attached.result as { control: boolean }).control, false, "a viewer never controls");
      for (
        const [method, params] of [
          ["session.send", { name: "job", message: { v: 1, type: "input", data: "x\n" } }],
          ["session.kill", { name: "job" }],
          ["session.create", { name: "other", argv: ["/bin/true"], cwd: "/" }],
          ["agent.open", { cwd: "/" }],
          ["daemon.stop", {}],
        ] as const
      ) {
        const answer = await viewer.call(method, params);
        assert.equal(
          (answer.error as { data?: { code?: string } })?.data?.code,
          "E_REMOTE_SCOPE",
          `${method}: ${JSON.stringify(answer)}`,
        );
      }
      const control = await WsRpc.open(daemon, daemon.info.control_token!);
      assert.equal((await control.hello()).scope, "control");
      const stop = await control.call("daemon.stop", {});
      assert.equal((stop.error as { data?: { code?: string } })?.data?.code, "E_REMOTE_SCOPE");
      const sent = await control.call("session.send", {
        name: "job",
        message: { v: 1, type: "input", data: "remote\n" },
      });
      assert.deepEqual(sent.result, {}, JSON.stringify(sent));
      await viewer.until(() => viewer.frames("job").some((f) => f.type === "pty_exited"), 20_000, "the exit");
      const text = viewer.frames("job").filter((f) => f.type === "stdout").map((f) => f.data).join("");
      assert.match(text, /got:remote/);
      // pty_exited: valid, after the exit frame, with its seq; also for a client attaching after the end.
      const frames = viewer.frames("job");
      const notice = FrameSchema.parse(frames.at(-1));
      assert.equal(notice.type, "pty_exited");
      assert.equal(frames.at(-2)?.type, "exit");
      assert.ok(notice.type === "pty_exited" && notice.session_id === "job" && notice.exit_code === 0);
      const late = await WsRpc.open(daemon, daemon.info.viewer_token!);
      await late.hello();
      await late.call("session.attach", { name: "job" });
      await late.until(() => late.notifications.some((n) => n.method === "session.end"), 10_000, "the end");
      assert.equal(late.frames("job").at(-1)?.type, "pty_exited");
      for (const client of [viewer, control, late]) client.close();
      await new Promise((resolve) => setTimeout(resolve, 300));
      const records = await remoteAudit(daemon);
      const connects = records.filter((r) => r.event === "connect");
      assert.deepEqual(connects.map((r) => r.scope), ["viewer", "control", "viewer"]);
      const disconnect = records.find((r) => r.event === "disconnect" && r.scope === "control");
      assert.deepEqual(disconnect?.sessions, ["job"], "the sessions it touched");
    });
  },
);

remoteTest(
  "remote: another site's Origin and a foreign Host (DNS rebinding) are refused before any token",
  async (dir) => {
    await withRemoteDaemon(dir, [], async (daemon) => {
      const token = daemon.info.control_token!;
      const evil = await handshake(daemon, {
        Origin: "https://evil.example",
        Authorization: `Bearer ${token}`,
      });
      assert.equal(evil.status, 403);
      assert.equal(evil.code, "E_REMOTE_ORIGIN");
      const same = await handshake(daemon, { Origin: daemon.origin, Authorization: `Bearer ${token}` });
      assert.equal(same.status, 101, same.head);
      same.conn.close();
      const rebound = await handshake(daemon, { Host: "evil.example:80", Authorization: `Bearer ${token}` });
      assert.equal(rebound.status, 403, rebound.head);
      assert.match(rebound.head, /E_REMOTE_HOST/);
      const page = await handshake(daemon, { Host: `attacker.example:${daemon.host.split(":")[1]}` });
      assert.equal(page.status, 403);
      // Refusals of this kind do not lock the user's address out (another site's page could cause them), nor
      // do requests a page can make without an Origin (an <img> of /v1/ws) or handshakes without a token.
      for (let i = 0; i < 20; i++) {
        await handshake(daemon, {
          Origin: "https://evil.example",
          Authorization: `Bearer wrong-${"w".repeat(30)}`,
        });
        await request(daemon, `/v1/ws?n=${i}`, { "sec-fetch-mode": "no-cors" });
        await handshake(daemon);
      }
      const rpc = await WsRpc.open(daemon, token);
      await rpc.hello();
      rpc.close();
    });
  },
);

remoteTest(
  "remote: 1 000 failed attempts lock the peer out (429) without looking at tokens; the log stays small",
  async (dir) => {
    await withRemoteDaemon(dir, [], async (daemon) => {
      const statuses = new Map<number, number>();
      for (let i = 0; i < 1000; i++) {
        const { status } = await handshake(daemon, {
          Authorization: `Bearer guess-${String(i).padStart(40, "0")}`,
        });
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
      assert.ok((statuses.get(401) ?? 0) <= 12, JSON.stringify([...statuses]));
      assert.ok((statuses.get(429) ?? 0) >= 988, JSON.stringify([...statuses]));
      // Locked out: even the right token is not looked at now.
      const right = await handshake(daemon, { Authorization: `Bearer ${daemon.info.control_token}` });
      assert.equal(right.status, 429);
      assert.ok(Number(/retry-after: (\d+)/i.exec(right.head)?.[1]) >= 1, right.head);
      const refusals = (await remoteAudit(daemon)).filter((r) => r.event === "refuse");
      assert.ok(refusals.length <= 12, `${refusals.length} refusals recorded`);
      assert.ok(refusals.some((r) => r.code === "E_REMOTE_LIMITED"));
      // The unix socket's clients are not affected.
      const ls = await specter(["ls", ...whereArgs(daemon), "--no-autostart", "--json"]);
      assert.equal(ls.code, 0, ls.stderr);
    });
  },
);

remoteTest("remote: tokens never appear in a log line (daemon, keeper, audit logs, stderr)", async (dir) => {
  await withRemoteDaemon(dir, [], async (daemon) => {
    await create(daemon, "logged", ["/bin/sh", "-c", "echo hi"]);
    const wrong = "wrong-token-" + "z".repeat(40);
    for (const token of [daemon.info.viewer_token!, daemon.info.control_token!, wrong]) {
      try {
        const rpc = await WsRpc.open(daemon, token, { via: "subprotocol" });
        await rpc.hello();
        await rpc.call("session.attach", { name: "logged" });
        rpc.close();
      } catch {
        // The wrong one is refused.
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    // remote.json (for specter url) and listen.json (the next daemon's listener) hold the tokens: 0600.
    for (const file of ["remote.json", "listen.json"]) {
      const info = Deno.statSync(join(daemon.stateDir, file));
      assert.equal((info.mode ?? 0) & 0o777, 0o600, `${file} holds the tokens: this user's only`);
    }
    const logs = [
      ...filesUnder(daemon.stateDir).filter((path) =>
        !path.endsWith("remote.json") && !path.endsWith("listen.json")
      ),
      ...filesUnder(join(daemon.stateDir, "..", "xdg-state")),
    ];
    assert.ok(logs.some((path) => path.endsWith("daemon.log")));
    assert.ok(logs.some((path) => path.endsWith(join("remote", "audit.ndjson"))));
    for (const path of logs) {
      const text = new TextDecoder().decode(Deno.readFileSync(path));
      for (const token of [daemon.info.viewer_token!, daemon.info.control_token!, wrong]) {
        assert.ok(!text.includes(token), `a token in ${path}`);
      }
    }
    const stderr = daemon.log.join("\n");
    for (const token of [daemon.info.viewer_token!, daemon.info.control_token!, wrong]) {
      assert.ok(!stderr.includes(token));
    }
  });
});

remoteTest(
  "remote: a client that never reads is dropped; the daemon's memory does not grow with it",
  async (dir) => {
    await withRemoteDaemon(dir, [], async (daemon) => {
      const line = "x".repeat(100);
      const flood = [
        "/bin/sh",
        "-c",
        `read go; i=0; while [ $i -lt 1000000 ]; do echo "$i ${line}"; i=$((i+1)); done`,
      ];
      const pid = daemon.process.pid;
      const before = rss(pid);
      /** Runs one flood (107 MB) to its end; the daemon's peak RSS meanwhile. */
      const run = async (name: string, during: () => Promise<void>): Promise<number> => {
        let peak = rss(pid);
        const sampler = setInterval(() => peak = Math.max(peak, rss(pid)), 100);
        try {
          await during();
          await specter(["send", name, ...whereArgs(daemon), "--no-autostart", "go", "--enter"]);
          const end = Date.now() + 90_000;
          for (;;) {
            const ls = await specter(["ls", ...whereArgs(daemon), "--no-autostart", "--json"]);
            const row = ls.stdout.trim().split("\n").map((l) => JSON.parse(l)).find((r) => r.name === name);
            if (row?.running === false) break;
            if (Date.now() > end) throw new Error(`The flood never ended: ${ls.stdout}`);
            await new Promise((resolve) => setTimeout(resolve, 200));
          }
        } finally {
          clearInterval(sampler);
        }
        return peak;
      };
      // The same flood watched by a client that reads: what serving a watcher costs anyway (its log, the
      // heap's garbage).
      await create(daemon, "read", flood);
      const reader = await WsRpc.open(daemon, daemon.info.control_token!);
      const read = await run("read", async () => {
        await reader.hello();
        await reader.call("session.attach", { name: "read" });
      });
      reader.close();
      await create(daemon, "flood", flood);
      let conn: Deno.TcpConn | null = null;
      const watched = await run("flood", async () => {
        const upgraded = await handshake(daemon, { Authorization: `Bearer ${daemon.info.control_token}` });
        assert.equal(upgraded.status, 101);
        conn = upgraded.conn;
        const call = (id: number, method: string, params: unknown) =>
          clientFrame(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
        await conn.write(call(1, "daemon.hello", { protocol: 1 }));
        await conn.write(call(2, "session.attach", { name: "flood" }));
        await new Promise((resolve) => setTimeout(resolve, 300));
        // It reads nothing from now on.
      });
      const records = Deno.readTextFileSync(join(daemon.stateDir, "remote", "audit.ndjson")).trim().split(
        "\n",
      )
        .map((l) => JSON.parse(l));
      const dropped = records.find((r) => r.event === "disconnect" && String(r.reason).startsWith("dropped"));
      assert.ok(dropped !== undefined, "the client was dropped");
      // What reached it at all: the kernel's buffers and at most the cap, not the 107 MB flood.
      let received = 0;
      const buffer = new Uint8Array(1 << 16);
      const client = conn as Deno.TcpConn | null;
      for (;;) {
        const n = await Promise.race([
          client!.read(buffer),
          new Promise<null>((r) => setTimeout(() => r(null), 2000)),
        ]);
        if (n === null) break;
        received += n;
      }
      client!.close();
      assert.ok(received < 48 * 2 ** 20, `the non-reader was sent ${received} bytes`);
      const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
      console.log(
        `peak growth: ${mib(read - before)} MiB with a reader, ${
          mib(watched - before)
        } MiB with the non-reader`,
      );
      // Unbounded, the non-reader would hold the whole 107 MB; it is cut off at 16 MiB waiting (the rest of
      // the difference is the heap's garbage, which varies by 20-30 MiB from run to run).
      assert.ok(
        watched - read < 64 * 2 ** 20,
        `the non-reader cost ${mib(watched - read)} MiB more than a client that reads`,
      );
    });
  },
  150_000,
);

remoteTest(
  "remote: --max-clients refuses one more (503); --compress zstd is agreed per client",
  async (dir) => {
    await withRemoteDaemon(dir, ["--max-clients", "2", "--compress", "zstd"], async (daemon) => {
      await create(daemon, "z", [
        "/bin/sh",
        "-c",
        "i=0; while [ $i -lt 2000 ]; do echo line $i of the output; i=$((i+1)); done",
      ]);
      const decoder = new TextDecoder();
      const packed = await WsRpc.open(daemon, daemon.info.viewer_token!, {
        decode: (data) => decoder.decode(zstdDecompressSync(new Uint8Array(data))),
      });
      assert.equal((await packed.hello({ compress: "zstd" })).compress, "zstd");
      const plain = await WsRpc.open(daemon, daemon.info.viewer_token!);
      assert.equal((await plain.hello()).compress, "none");
      const busy = await handshake(daemon, { Authorization: `Bearer ${daemon.info.viewer_token}` });
      assert.equal(busy.status, 503);
      for (const client of [packed, plain]) await client.call("session.attach", { name: "z" });
      for (const client of [packed, plain]) {
        await client.until(
          () => client.notifications.some((n) => n.method === "session.end"),
          30_000,
          "the end",
        );
      }
      const text = (c: WsRpc) => c.frames("z").filter((f) => f.type === "stdout").map((f) => f.data).join("");
      assert.equal(text(packed), text(plain));
      assert.match(text(plain), /line 1999 of the output/);
      assert.ok(
        packed.wireBytes < plain.wireBytes / 3,
        `${packed.wireBytes} compressed vs ${plain.wireBytes}`,
      );
      packed.close();
      plain.close();
    });
  },
);

remoteTest(
  "remote: a token file (0600) scopes tokens to sessions and labels them; a readable one is refused",
  async (dir) => {
    const file = join(dir, "tokens.json");
    const alice = "alice-" + "a".repeat(30);
    const ops = "ops-" + "o".repeat(30);
    Deno.writeTextFileSync(
      file,
      JSON.stringify({
        tokens: [
          { token: alice, scope: "viewer", sessions: ["mine"], label: "alice" },
          { token: ops, scope: "control", label: "ops" },
        ],
      }),
      { mode: 0o644 },
    );
    Deno.chmodSync(file, 0o644);
    const refused = await specter([
      "daemon",
      "--state-dir",
      join(dir, "s1"),
      "--socket",
      join(dir, "r1", "d.sock"),
      "--bind",
      "127.0.0.1:0",
      "--token-file",
      file,
    ]);
    assert.equal(refused.code, 125, refused.stderr);
    assert.match(refused.stderr, /E_REMOTE_TOKEN_FILE.*mode 644/);
    assert.ok(!refused.stderr.includes(alice));
    Deno.chmodSync(file, 0o600);
    await withRemoteDaemon(join(dir, "d"), ["--token-file", file], async (daemon) => {
      assert.equal(daemon.info.viewer_token, null, "no tokens are made when a file has them");
      await create(daemon, "mine", ["/bin/sh", "-c", "echo mine"]);
      await create(daemon, "theirs", ["/bin/sh", "-c", "echo theirs"]);
      const rpc = await WsRpc.open(daemon, alice);
      await rpc.hello();
      const list = await rpc.call("session.list", {});
      assert.deepEqual((list.result as { sessions: { name: string }[] }).sessions.map((s) => s.name), [
        "mine",
      ]);
      const other = await rpc.call("session.attach", { name: "theirs" });
      assert.equal((other.error as { data?: { code?: string } })?.data?.code, "E_REMOTE_SCOPE");
      rpc.close();
      const url = await specter(["url", "--state-dir", daemon.stateDir, "--control"]);
      assert.equal(url.code, 0, url.stderr);
      assert.ok(url.stdout.trim().endsWith(`#token=${ops}`), url.stdout);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const connect = (await remoteAudit(daemon)).find((r) => r.event === "connect");
      assert.equal(connect?.token, "alice");
      assert.deepEqual(connect?.only, ["mine"]);
    });
  },
);

remoteTest(
  "remote: a non-loopback address needs TLS or --insecure-bind; with a certificate it serves HTTPS",
  async (dir) => {
    const where = (
      name: string,
    ) => ["--state-dir", join(dir, name, "state"), "--socket", join(dir, name, "run", "d.sock")];
    Deno.mkdirSync(join(dir, "a"), { mode: 0o700 });
    const plain = await specter(["daemon", ...where("a"), "--bind", "0.0.0.0:0"]);
    assert.equal(plain.code, 125, plain.stderr);
    assert.match(plain.stderr, /E_REMOTE_BIND.*needs TLS/);
    const usage = await specter(["daemon", ...where("a"), "--tls-cert", "x.pem"]);
    assert.equal(usage.code, 2);
    // A CA and a certificate it signed (rustls refuses a self-signed certificate as its own CA).
    Deno.writeTextFileSync(join(dir, "ext.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    const ssl = (args: string[]) =>
      new Deno.Command("openssl", { args, cwd: dir, stdout: "null", stderr: "null" }).output();
    const steps = [
      await ssl([
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=specter-test-ca",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
      ]),
      await ssl([
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-keyout",
        "key.pem",
        "-out",
        "leaf.csr",
      ]),
      await ssl([
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "1",
        "-out",
        "cert.pem",
        "-extfile",
        "ext.cnf",
      ]),
    ];
    const openssl = { code: Math.max(...steps.map((step) => step.code)) };
    assert.equal(openssl.code, 0, "openssl made a certificate");
    await withRemoteDaemon(join(dir, "tls"), [
      "--tls-cert",
      join(dir, "cert.pem"),
      "--tls-key",
      join(dir, "key.pem"),
    ], async (daemon) => {
      assert.ok(daemon.info.url.startsWith("https://"), daemon.info.url);
      assert.equal(daemon.info.tls, true);
      const client = Deno.createHttpClient({ caCerts: [Deno.readTextFileSync(join(dir, "ca.pem"))] });
      try {
        const page = await fetch(daemon.info.url, { client });
        assert.equal(page.status, 200);
        assert.match(await page.text(), /<title>Specter<\/title>/);
        const ws = await fetch(`${daemon.info.url}v1/ws`, { client });
        assert.equal(ws.status, 400, "not a handshake");
        await ws.body?.cancel();
      } finally {
        client.close();
      }
    });
    await withRemoteDaemon(
      join(dir, "insecure"),
      ["--bind", "0.0.0.0:0", "--insecure-bind"],
      async (daemon) => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        assert.match(daemon.log.join("\n"), /WARNING: listening on http:\/\/0\.0\.0\.0:\d+\/ without TLS/);
        const records = await remoteAudit(daemon);
        assert.equal(records[0]?.event, "listen");
        assert.equal(records[0]?.insecure_bind, true);
      },
    );
  },
);

remoteTest(
  "remote: a control token's sessions are sandboxed: no unsandboxed mode, acknowledgements, policy files or host paths",
  async (dir) => {
    await withRemoteDaemon(dir, [], async (daemon) => {
      const rpc = await WsRpc.open(daemon, daemon.info.control_token!);
      const hello = await rpc.hello();
      assert.equal(hello.state_dir, "", "no host path for a remote client");
      const create = (name: string, flags: Record<string, unknown>) =>
        rpc.call("session.create", { name, argv: ["/bin/sh", "-c", "echo made; read x"], cwd: dir, flags });
      for (
        const flags of [
          { sandbox: "none", "unsafe-no-sandbox": true, "ack-no-network-enforcement": true },
          { "unsafe-no-sandbox": true },
          { policy: join(dir, "policy.json") },
          { "sandbox-profile": "../strict" },
          { "ack-network": true, policy: "basic" },
          { "prompt-regex": "(a+)+$" },
          { sandbox: "external", "ack-external-sandbox": true },
        ]
      ) {
        const answer = await create("bad", flags);
        assert.equal(
          (answer.error as { data?: { code?: string } })?.data?.code,
          "E_REMOTE_SCOPE",
          JSON.stringify([flags, answer]),
        );
      }
      const made = await create("good", { policy: "basic", title: "made remotely", timeout: "30s" });
      assert.equal((made.result as { name: string }).name, "good", JSON.stringify(made));
      await rpc.call("session.attach", { name: "good" });
      await rpc.until(() => rpc.frames("good").some((f) => f.type === "start"), 10_000, "its start");
      const start = rpc.frames("good").find((f) => f.type === "start")!;
      assert.equal(start.sandbox, "bwrap");
      const list = await rpc.call("session.list", {});
      const row = (list.result as { sessions: Record<string, unknown>[] }).sessions.find((s) =>
        s.name === "good"
      )!;
      assert.equal(row.audit, null, "no host path for a remote client");
      // Snapshots and attaches are limited per client (they hold the daemon's thread).
      const answers = await Promise.all(
        Array.from({ length: 125 }, () => rpc.call("session.screen", { name: "good" })),
      );
      assert.ok(
        answers.some((a) => (a.error as { data?: { code?: string } })?.data?.code === "E_REMOTE_LIMITED"),
      );
      rpc.close();
    });
  },
);

remoteTest(
  "remote: a flood of idle connections is capped and cannot end the daemon (even out of descriptors); a real client gets in once it is gone",
  async (dir) => {
    // 90 descriptors: fewer than the per-address cap, so accepting fails with EMFILE (which ended the daemon
    // when Deno.serve accepted).
    await withRemoteDaemon(dir, [], async (daemon) => {
      const [hostname, port] = [daemon.host.split(":")[0]!, Number(daemon.host.split(":")[1])];
      const idle: Deno.TcpConn[] = [];
      for (let i = 0; i < 400; i++) {
        try {
          idle.push(await Deno.connect({ hostname, port }));
        } catch {
          // Refused: fine.
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      const ls = await specter(["ls", ...whereArgs(daemon), "--no-autostart", "--json"]);
      assert.equal(ls.code, 0, `the daemon still serves its unix socket: ${ls.stderr}`);
      for (const conn of idle) {
        try {
          conn.close();
        } catch {
          // Closed by the daemon (over the cap).
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      const rpc = await WsRpc.open(daemon, daemon.info.viewer_token!);
      assert.equal((await rpc.hello()).scope, "viewer");
      rpc.close();
      assert.match(daemon.log.join("\n"), /accepting failed .*backing off/);
    }, ["prlimit", "--nofile=90:90"]);
  },
);

remoteTest(
  "remote: a frame declaring 100 MiB is refused before its payload is read (close 1009); garbage ends only its connection",
  async (dir) => {
    await withRemoteDaemon(dir, [], async (daemon) => {
      /** Everything the daemon sends until it closes the connection. */
      const readAll = async (conn: Deno.TcpConn) => {
        const buffer = new Uint8Array(65536);
        const parts: number[] = [];
        for (;;) {
          const n = await Promise.race([
            conn.read(buffer),
            new Promise<null>((r) => setTimeout(() => r(null), 5000)),
          ])
            .catch(() => null);
          if (n === null) break;
          parts.push(...buffer.subarray(0, n));
        }
        return new Uint8Array(parts);
      };
      const big = await handshake(daemon, { Authorization: `Bearer ${daemon.info.viewer_token}` });
      assert.equal(big.status, 101);
      // FIN + text, masked, 64-bit length 100 MiB, then a mask and no payload at all.
      const started = performance.now();
      await big.conn.write(new Uint8Array([0x81, 0xff, 0, 0, 0, 0, 0x06, 0x40, 0, 0, 1, 2, 3, 4]));
      const answer = new TextDecoder().decode(await readAll(big.conn));
      assert.ok(performance.now() - started < 4000, "answered at once, not after waiting for the payload");
      assert.match(answer, /E_DAEMON_PEER/, "a typed error first");
      assert.match(answer, /longer than 1048576 bytes/);
      big.conn.close();
      const garbage = await handshake(daemon, { Authorization: `Bearer ${daemon.info.viewer_token}` });
      await garbage.conn.write(new TextEncoder().encode("this is not a websocket frame at all"));
      assert.match(new TextDecoder().decode(await readAll(garbage.conn)), /broke the WebSocket protocol/);
      garbage.conn.close();
      const rpc = await WsRpc.open(daemon, daemon.info.viewer_token!);
      assert.equal((await rpc.hello()).scope, "viewer", "others are not affected");
      rpc.close();
    });
  },
);

remoteTest(
  "remote: specter url without a listening daemon (E_REMOTE_NONE, exit 2), with a damaged remote.json (E_REMOTE_BIND) or a stale one",
  async (dir) => {
    const state = join(dir, "state");
    Deno.mkdirSync(state, { mode: 0o700 });
    const url = () => specter(["url", "--state-dir", state]);
    const none = await url();
    assert.equal(none.code, 2);
    assert.match(none.stderr, /E_REMOTE_NONE: The daemon of .* has no listener.*specter daemon listen/);
    Deno.writeTextFileSync(join(state, "remote.json"), "{ not json", { mode: 0o600 });
    const damaged = await url();
    assert.equal(damaged.code, 125);
    assert.match(damaged.stderr, /E_REMOTE_BIND: .*is damaged/);
    const info = {
      url: "http://127.0.0.1:1/",
      pid: 2 ** 22 + 7, // Above the kernel's pid_max: no such process.
      tls: false,
      compress: "none",
      token_file: null,
      viewer_token: "v".repeat(43),
      control_token: "c".repeat(43),
    };
    Deno.writeTextFileSync(join(state, "remote.json"), JSON.stringify(info), { mode: 0o600 });
    const stale = await url();
    assert.equal(stale.code, 2, "its daemon is gone and no listener is remembered: none to start");
    assert.match(stale.stderr, /E_REMOTE_NONE: /);
    assert.ok(!stale.stderr.includes("v".repeat(43)), "no token in the message");
  },
);
