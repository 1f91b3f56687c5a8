/**
 * A network allow list end to end, with real processes and loopback servers only: `specter run
 * --allow-net` under bwrap, the relay in the sandbox's network namespace, the run's proxy outside. One
 * sandbox checks every acceptance point of issue 26 (it is one `specter run`, to keep the suite cheap):
 * what is allowed answers through curl and Python with no proxy setting of their own; another port,
 * another name, a redirect to a refused port and an allowed name that resolves to loopback are refused
 * with a 403 naming the policy; direct sockets, UDP and DNS do not leave; both decisions are audited and
 * `net` frames; the audit log verifies; no relay is left.
 */
import assert from "node:assert/strict";
import { createSocket } from "node:dgram";
import { join } from "node:path";
import { CliProcess, runCli, sessionTest, withTempDir } from "./_helpers.ts";
import { auditRecords, cleanUp, create, startDaemon } from "./_daemon.ts";

/** A loopback HTTP server: `/` answers `hello from PORT`, `/redirect` sends the client to `to()`. */
function server(to: () => string = () => "") {
  let requests = 0;
  let port = 0;
  const http: Deno.HttpServer<Deno.NetAddr> = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request: Request): Response => {
      requests++;
      const path = new URL(request.url).pathname;
      if (path === "/redirect") return new Response(null, { status: 302, headers: { location: to() } });
      return new Response(`hello from ${port}\n`);
    },
  );
  port = http.addr.port;
  return { http, port, requests: () => requests };
}

function relaysUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const argv = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).split("\0");
      if (argv.includes("net-relay") && argv.some((arg) => arg.startsWith(dir))) {
        pids.push(Number(entry.name));
      }
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

for (const relay of ["in-process", "process"] as const) {
  sessionTest(
    `an allow list (${
      relay === "process"
        ? "through a relay process, as without root"
        : "the proxy serving the sandbox's namespace itself"
    }): allowed through the proxy, everything else refused or unreachable, all audited`,
    async () => {
      await withTempDir(async (dir) => {
        const refused = server();
        const allowed = server(() => `http://localhost:${refused.port}/`);
        const udp = createSocket("udp4");
        let datagrams = 0;
        udp.on("message", () => datagrams++);
        await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve));
        const a = allowed.port;
        const script = [
          `curl -sS -m 10 http://localhost:${a}/ | sed 's/^/curl: /'`,
          `/usr/bin/python3 -c 'import urllib.request as u; print("python:", u.urlopen("http://localhost:${a}/", timeout=10).read().decode(), end="")'`,
          `echo "port: $(curl -s -m 10 -o port.txt -w '%{http_code}' http://localhost:${refused.port}/) $(cat port.txt)"`,
          `echo "name: $(curl -s -m 10 -o /dev/null -w '%{http_code}' http://example.com:${a}/)"`,
          `echo "redirect: $(curl -s -m 10 -L -o /dev/null -w '%{http_code} %{num_redirects}' http://localhost:${a}/redirect)"`,
          `echo "rebinding: $(curl -s -m 10 -o /dev/null -w '%{http_code}' http://vm:${a}/)"`,
          `curl -s -m 3 --noproxy '*' http://127.0.0.1:${a}/; echo "direct: $?"`,
          `/usr/bin/python3 -c 'import socket
try:
    socket.create_connection(("127.0.0.1", ${a}), timeout=3); print("socket: connected")
except OSError as e: print("socket:", type(e).__name__)
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"leak", ("127.0.0.1", ${udp.address().port}))'`,
          `getent hosts example.com; echo "dns: $?"`,
        ].join("\n");
        const runtime = join(dir, "runtime");
        Deno.mkdirSync(runtime, { mode: 0o700 });
        const work = join(dir, "work");
        Deno.mkdirSync(work);
        const artifacts = join(dir, "artifacts");
        const { code, frames, stderr } = await runCli(
          [
            "run",
            "--artifacts",
            artifacts,
            "--cwd",
            work,
            "--policy",
            "workspace",
            "--allow-net",
            `localhost:${a},vm:${a}`,
            "--ack-network",
            "--ack-unsafe-write",
            "--",
            "/bin/sh",
            "-c",
            script,
          ],
          "",
          { XDG_RUNTIME_DIR: runtime, ...(relay === "process" ? { SPECTER_NET_RELAY: "process" } : {}) },
        );
        try {
          const text = frames.filter((f) => f.type === "stdout").map((f) => f.data).join("").replaceAll(
            "\r",
            "",
          );
          const exit = frames.find((f) => f.type === "exit");
          assert.equal(code, 0, `${text}\n${stderr}`);
          assert.equal(exit?.code, 0, text);
          // Allowed: both clients, with nothing but the environment Specter set.
          assert.match(text, new RegExp(`^curl: hello from ${a}$`, "m"));
          assert.match(text, new RegExp(`^python: hello from ${a}$`, "m"));
          // Refused with a 403 that names the policy: another port, another name, a redirect's target, and a
          // name the rule allows that resolves to loopback (the rule named a name, not that address).
          assert.match(text, /^port: 403 .*"preset:workspace"/m);
          assert.match(text, /^name: 403$/m);
          assert.match(text, /^redirect: 403 1$/m);
          assert.match(text, /^rebinding: 403$/m);
          assert.equal(refused.requests(), 0);
          assert.equal(allowed.requests(), 3); // curl, python, and the redirect's first hop.
          // Nothing leaves but through the proxy: no route, no DNS, UDP stays on the sandbox's own loopback.
          assert.match(text, /^direct: 7$/m);
          assert.match(text, /^socket: ConnectionRefusedError$/m);
          assert.match(text, /^dns: 2$/m);
          assert.equal(datagrams, 0);

          // Both decisions are in the audit log (as `net` frames too), and the log verifies.
          const records = Deno.readTextFileSync(join(artifacts, "audit.ndjson")).trim().split("\n").map((
            line,
          ) => JSON.parse(line) as Record<string, unknown>);
          const net = records.filter((r) => r.event === "net");
          const of = (host: string, port: number) => net.filter((r) => r.host === host && r.port === port);
          assert.ok(of("localhost", a).some((r) => r.decision === "allowed" && r.rule === `localhost:${a}`));
          assert.ok(of("localhost", a).every((r) => r.decision === "allowed"));
          assert.ok(of("localhost", refused.port).length >= 2); // Asked for directly, and by the redirect.
          assert.ok(of("localhost", refused.port).every((r) => r.decision === "refused"));
          assert.deepEqual(of("example.com", a).map((r) => r.decision), ["refused"]);
          assert.deepEqual(of("vm", a).map((r) => [r.decision, r.address]), [["refused", "127.0.0.1"]]);
          const allowedBytes = of("localhost", a).find((r) => r.decision === "allowed")!;
          assert.ok((allowedBytes.bytes_down as number) > 0 && (allowedBytes.bytes_up as number) > 0);
          const netFrames = frames.filter((f) => f.type === "net");
          assert.ok(netFrames.some((f) => f.decision === "allowed"));
          assert.ok(netFrames.some((f) => f.decision === "refused"));
          const verify = await runCli(["audit", "verify", artifacts]);
          assert.equal(verify.code, 0, verify.stdout + verify.stderr);

          // No relay is left, and the proxy's private directory is gone.
          assert.deepEqual(relaysUnder(runtime), []);
          assert.deepEqual([...Deno.readDirSync(runtime)], []);
        } finally {
          udp.close();
          await allowed.http.shutdown();
          await refused.http.shutdown();
        }
      });
    },
    90_000,
  );
}

sessionTest(
  "an agent's exec_command session gets its own proxy: its connections in its own audit log",
  async () => {
    await withTempDir(async (dir) => {
      const allowed = server();
      const runtime = join(dir, "runtime");
      Deno.mkdirSync(runtime, { mode: 0o700 });
      const state = join(dir, "state");
      try {
        const cmd = `curl -sS -m 10 http://localhost:${allowed.port}/; ` +
          `curl -s -m 10 -o /dev/null -w 'other: %{http_code}\\n' http://localhost:${allowed.port + 1}/`;
        const agent = new CliProcess(
          [
            "agent",
            "--cwd",
            dir,
            "--policy",
            "basic",
            "--allow-net",
            `localhost:${allowed.port}`,
            "--ack-network",
          ],
          { XDG_RUNTIME_DIR: runtime, XDG_STATE_HOME: state },
        );
        await agent.send({
          jsonrpc: "2.0",
          id: 1,
          method: "exec_command",
          params: { cmd, yield_time_ms: 20_000 },
        });
        await agent.closeStdin();
        const { code, stdout } = await agent.result();
        const reply = JSON.parse(new TextDecoder().decode(stdout).split("\n")[0]!) as {
          result: { output: string; exit_code: number };
        };
        assert.equal(code, 0);
        assert.match(reply.result.output, new RegExp(`hello from ${allowed.port}`));
        assert.match(reply.result.output, /other: 403/);
        const runs = [...Deno.readDirSync(join(state, "specter", "runs"))];
        assert.equal(runs.length, 1);
        const log = join(state, "specter", "runs", runs[0]!.name, "audit.ndjson");
        const net = Deno.readTextFileSync(log).trim().split("\n").map((line) => JSON.parse(line))
          .filter((r) => r.event === "net").map((r) => [r.decision, r.port]);
        assert.deepEqual(net, [["allowed", allowed.port], ["refused", allowed.port + 1]]);
        const verify = await runCli(["audit", "verify", log]);
        assert.equal(verify.code, 0, verify.stdout + verify.stderr);
        assert.deepEqual(relaysUnder(runtime), []);
        assert.deepEqual([...Deno.readDirSync(runtime)], []);
      } finally {
        await allowed.http.shutdown();
      }
    });
  },
  60_000,
);

/** Relays whose parent is `pid` (each supervisor starts its own). */
function relaysOf(pid: number): number[] {
  const pids: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const argv = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).split("\0");
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (argv.includes("net-relay") && ppid === pid) pids.push(Number(entry.name));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

sessionTest(
  "a daemon session (specter new --allow-net) has its own proxy, audited, and no relay outlives it",
  async () => {
    await withTempDir(async (dir) => {
      const allowed = server();
      const daemon = await startDaemon(dir);
      try {
        const cmd = `curl -sS -m 10 http://localhost:${allowed.port}/; ` +
          `curl -s -m 10 -o /dev/null http://localhost:${allowed.port + 1}/`;
        const flags = ["--policy", "basic", "--allow-net", `localhost:${allowed.port}`, "--ack-network"];
        await create(daemon, "net", ["/bin/sh", "-c", cmd], flags);
        let records: Record<string, unknown>[] = [];
        for (let i = 0; i < 300 && !records.some((r) => r.event === "end"); i++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          records = await auditRecords(daemon, "net"); // Also checks that the log verifies.
        }
        const net = records.filter((r) => r.event === "net").map((r) => [r.decision, r.port]);
        assert.deepEqual(net, [["allowed", allowed.port], ["refused", allowed.port + 1]]);
        assert.equal(allowed.requests(), 1);
        assert.deepEqual(relaysOf(daemon.process.pid), []);
      } finally {
        await cleanUp(daemon);
        await allowed.http.shutdown();
      }
    });
  },
  60_000,
);
