/**
 * A remote client learns nothing about the host's files from a program that cannot start: whatever the
 * reason (missing, not executable, a directory, a device, a FIFO, a dangling link, a file inside a 0700
 * directory, a path through a file), `session.create`, `exec_command` and
 * `session.start` answer it with the same bytes (`E_SPAWN_FAILED`, no details) apart from the request's id;
 * a policy name that is not a preset is refused alike whether a file of that name exists or not. The unix
 * socket's client still gets the precise error, and the daemon's log keeps the reason.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withTempDir, withTimeout } from "./_helpers.ts";
import { DaemonClient } from "../src/daemon/mod.ts";
import { SpecterError } from "../src/errors.ts";
import { withRemoteDaemon, WsRpc } from "./_remote.ts";

function remoteTest(name: string, fn: (dir: string) => Promise<void>, timeoutMs = 90_000): void {
  Deno.test({ name, sanitizeOps: false, sanitizeResources: false }, async () => {
    await withTempDir((dir) => withTimeout(fn(dir), timeoutMs, name));
  });
}

/** Programs that cannot start, for different reasons, each with the code a unix socket client is told. */
function hostFiles(dir: string): { argv: string[]; env?: string; local: string }[] {
  const open = join(dir, "open");
  const secret = join(dir, "secret");
  Deno.mkdirSync(open, { mode: 0o755 });
  Deno.mkdirSync(secret, { mode: 0o700 });
  for (const where of [open, secret]) {
    Deno.writeTextFileSync(join(where, "data"), "not a program\n", { mode: 0o644 });
    Deno.mkdirSync(join(where, "sub"), { mode: 0o700 });
  }
  Deno.symlinkSync(join(secret, "gone"), join(open, "dangling"));
  Deno.symlinkSync(join(open, "loop"), join(open, "loop"));
  new Deno.Command("mkfifo", { args: [join(open, "fifo")] }).outputSync();
  return [
    { argv: ["/no/such/program"], local: "E_SPAWN_NOT_FOUND" },
    { argv: [join(secret, "gone")], local: "E_SPAWN_NOT_FOUND" },
    { argv: [join(open, "data")], local: "E_SPAWN_NOT_EXECUTABLE" },
    { argv: [join(secret, "data")], local: "E_SPAWN_NOT_EXECUTABLE" },
    { argv: [join(secret, "data", "x")], local: "E_SPAWN_NOT_FOUND" },
    { argv: [join(secret, "sub")], local: "E_SPAWN_NOT_EXECUTABLE" },
    { argv: [secret], local: "E_SPAWN_NOT_EXECUTABLE" },
    { argv: [join(open, "fifo")], local: "E_SPAWN_NOT_EXECUTABLE" },
    { argv: ["/dev/null"], local: "E_SPAWN_NOT_EXECUTABLE" },
    { argv: [join(open, "dangling")], local: "E_SPAWN_NOT_FOUND" },
    { argv: [join(open, "loop")], local: "E_SPAWN_NOT_FOUND" },
    { argv: ["no-such-program-anywhere"], local: "E_SPAWN_NOT_FOUND" },
    // A bare name looked up on a PATH the client chose: a 0700 directory holding it as a plain file.
    { argv: ["data"], env: `PATH=${secret}`, local: "E_SPAWN_NOT_EXECUTABLE" },
    { argv: [""], local: "E_SPAWN_NOT_FOUND" },
  ];
}

/** The answer with its id left out: what must be the same for every program. */
function withoutId(answer: Record<string, unknown>): string {
  return JSON.stringify({ ...answer, id: null });
}

remoteTest(
  "remote start errors: every program that cannot start gets the same answer; the unix socket's client the precise one",
  async (dir) => {
    const cases = hostFiles(dir);
    await withRemoteDaemon(join(dir, "d"), [], async (daemon) => {
      const rpc = await WsRpc.open(daemon, daemon.info.control_token!);
      await rpc.hello();
      const answers: string[] = [];
      for (const { argv, env } of cases) {
        const answer = await rpc.call("session.create", {
          name: "probe",
          argv,
          cwd: "/",
          flags: { policy: "basic", ...(env === undefined ? {} : { env: [env] }) },
        });
        answers.push(withoutId(answer));
      }
      const expected = JSON.stringify({
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32000,
          message: "The program could not be started",
          data: { code: "E_SPAWN_FAILED", message: "The program could not be started", details: {} },
        },
      });
      cases.forEach((c, i) => assert.equal(answers[i], expected, JSON.stringify(c.argv)));
      assert.ok(!answers.join("").includes(dir), "no host path in any answer");
      // The reason is the owner's: in the daemon's log.
      await waitFor(() => daemon.log.some((line) => line.includes("E_SPAWN_NOT_EXECUTABLE")), "the log");
      assert.ok(daemon.log.some((line) => /a program could not start: E_SPAWN_NOT_FOUND/.test(line)));

      // A program that can start does (the uniform answer is not every answer), and its answer names no
      // host path (its audit log).
      const made = await rpc.call("session.create", {
        name: "fine",
        argv: ["/bin/sh", "-c", "read x"],
        cwd: "/",
        flags: { policy: "basic" },
      });
      const fine = made.result as Record<string, unknown>;
      assert.equal(fine?.name, "fine", JSON.stringify(made));
      assert.equal(fine.audit, null);
      assert.equal(fine.persist, null);
      // A name in use is about the request, not the host: told as it is.
      const again = await rpc.call("session.create", { name: "fine", argv: ["/bin/true"], cwd: "/" });
      assert.equal((again.error as { data: { code: string } }).data.code, "E_SESSION_EXISTS");

      // The unix socket's client is the user: it gets the precise error (and the path).
      const local = await DaemonClient.connect({ socketPath: daemon.socket });
      try {
        for (const { argv, env, local: code } of cases) {
          const error = await local.call("session.create", {
            name: "probe",
            argv,
            cwd: "/",
            flags: { policy: "basic", ...(env === undefined ? {} : { env: [env] }) },
          }).then(() => null, (e: unknown) => e);
          assert.ok(error instanceof SpecterError, JSON.stringify(argv));
          assert.equal(error.code, code, `${JSON.stringify(argv)}: ${error.message}`);
        }
      } finally {
        local.close();
      }
      rpc.close();
    });
  },
);

remoteTest(
  "remote start errors: a remote agent's exec_command and session.start get the same answer for every program",
  async (dir) => {
    const cases = hostFiles(dir);
    await withRemoteDaemon(join(dir, "d"), [], async (daemon) => {
      const rpc = await WsRpc.open(daemon, daemon.info.control_token!);
      await rpc.hello();
      const opened = await rpc.call("agent.open", { cwd: "/", flags: { policy: "basic" } });
      assert.deepEqual(opened.result, { agent: true }, JSON.stringify(opened));
      const answers = new Set<string>();
      for (const { argv, env } of cases) {
        const envs = env === undefined ? {} : { env: { PATH: env.slice("PATH=".length) } };
        answers.add(withoutId(await rpc.call("exec_command", { cmd: argv, yield_time_ms: 2000, ...envs })));
        answers.add(withoutId(await rpc.call("session.start", { cmd: argv, ...envs })));
      }
      assert.deepEqual([...answers], [
        JSON.stringify({
          jsonrpc: "2.0",
          id: null,
          error: {
            code: -32000,
            message: "The program could not be started",
            data: { code: "E_SPAWN_FAILED" },
          },
        }),
      ]);
      // The tools work: a program that can start runs.
      const ran = await rpc.call("exec_command", { cmd: ["/bin/echo", "ran"], yield_time_ms: 5000 });
      assert.match(String((ran.result as { output?: string })?.output), /ran/, JSON.stringify(ran));
      rpc.close();
    });
  },
);

remoteTest(
  "remote start errors: a policy that is not a preset is refused alike whether a file of that name exists or not",
  async (dir) => {
    await withRemoteDaemon(join(dir, "d"), [], async (daemon) => {
      const rpc = await WsRpc.open(daemon, daemon.info.control_token!);
      await rpc.hello();
      // A policy name used to be read as a file in the daemon's directory (this test's): a directory there
      // was E_FILE_TYPE, a missing name E_POLICY_NOT_FOUND.
      const there = [...Deno.readDirSync(Deno.cwd())].find((e) =>
        e.isDirectory && /^[a-z][a-z0-9-]*$/.test(e.name)
      );
      assert.ok(there !== undefined, "a directory with a preset-like name in the daemon's directory");
      const answers = new Set<string>();
      for (const policy of [there.name, "no-such-policy-file"]) {
        for (const method of ["session.create", "agent.open"]) {
          const answer = await rpc.call(method, {
            ...(method === "session.create" ? { name: "p", argv: ["/bin/true"] } : {}),
            cwd: "/",
            flags: { policy },
          });
          assert.equal((answer.error as { data: { code: string } }).data.code, "E_REMOTE_SCOPE");
          answers.add(withoutId(answer));
        }
      }
      assert.equal(answers.size, 1, [...answers].join("\n"));
      rpc.close();
    });
  },
);

async function waitFor(test: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !test(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  assert.ok(test(), `Timed out waiting for ${what}`);
}
