/**
 * Durations no timer can wait are refused, never a kill that comes at once: a host timer takes at most
 * 2^31 - 1 ms, and a longer delay fired immediately (`{"type":"terminate","grace_ms":2147483648}` SIGKILLed
 * the program at once). Against real processes: `specter run`'s driver, the daemon's `session.send`, and
 * the agent tools' `yield_time_ms` (clamped, documented).
 */
import assert from "node:assert/strict";
import { CliProcess, DENO, ROOT, sessionTest, withTempDir } from "./_helpers.ts";
import { cleanUp, startDaemon } from "./_daemon.ts";
import { DaemonClient } from "../src/daemon/mod.ts";

const UNSAFE = ["--unsafe-no-sandbox", "--ack-no-network-enforcement"];
/** A program that ignores SIGTERM and SIGHUP (so only SIGKILL ends it), and says so. */
const STUBBORN = 'trap "" TERM HUP; echo ready; while :; do sleep 0.1; done';
const TOO_LONG = [2 ** 31, 2 ** 32 + 3000];

/** `specter run` driven frame by frame. */
class Run {
  readonly child: Deno.ChildProcess;
  readonly frames: Record<string, unknown>[] = [];
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #waiters: { test: (f: Record<string, unknown>) => boolean; resolve: () => void }[] = [];

  constructor(args: string[]) {
    this.child = new Deno.Command(DENO, {
      args: ["run", "--quiet", "-A", `${ROOT}/main.ts`, "run", ...args],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      cwd: ROOT,
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    void this.#read();
  }

  async #read(): Promise<void> {
    const decoder = new TextDecoder();
    let pending = "";
    for await (const chunk of this.child.stdout) {
      pending += decoder.decode(chunk, { stream: true });
      let newline: number;
      while ((newline = pending.indexOf("\n")) >= 0) {
        this.frames.push(JSON.parse(pending.slice(0, newline)));
        pending = pending.slice(newline + 1);
      }
      this.#waiters = this.#waiters.filter((w) => !(this.frames.some(w.test) && (w.resolve(), true)));
    }
    for (const w of this.#waiters) w.resolve();
  }

  /** The first frame passing `test` (already seen or to come). */
  async waitFor(test: (f: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    if (!this.frames.some(test)) await new Promise<void>((resolve) => this.#waiters.push({ test, resolve }));
    const frame = this.frames.find(test);
    assert.ok(frame !== undefined, `No such frame: ${JSON.stringify(this.frames)}`);
    return frame;
  }

  send(message: Record<string, unknown>): Promise<void> {
    return this.#writer.write(new TextEncoder().encode(JSON.stringify({ v: 1, ...message }) + "\n"));
  }

  exited(): boolean {
    return this.frames.some((f) => f.type === "exit");
  }
}

/** True while `pid` runs (not reaped, not a zombie). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(Deno.readTextFileSync(`/proc/${pid}/stat`));
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

sessionTest(
  "specter run: terminate with a grace of 2^31 or 2^32 + 3000 ms is E_PROTOCOL; the program is not killed",
  async () => {
    const run = new Run([...UNSAFE, "--", "/bin/sh", "-c", STUBBORN]);
    const start = await run.waitFor((f) => f.type === "start");
    await run.waitFor((f) => f.type === "stdout" && String(f.data).includes("ready"));
    const pid = start.pid as number;
    for (const [i, grace_ms] of TOO_LONG.entries()) {
      await run.send({ type: "terminate", grace_ms });
      await run.waitFor(() => run.frames.filter((f) => f.type === "error").length > i);
      const error = run.frames.filter((f) => f.type === "error")[i]!;
      assert.equal(error.code, "E_PROTOCOL", JSON.stringify(error));
      assert.match(String(error.message), /"grace_ms": must be at most 2147483647 ms/);
    }
    await sleep(1000);
    assert.ok(!run.exited() && alive(pid), "still running 1 s after both: not killed at once");
    // The longest grace there is: SIGTERM (ignored), and SIGKILL not before 2^31 - 1 ms.
    await run.send({ type: "terminate", grace_ms: 2 ** 31 - 1 });
    await sleep(1000);
    assert.ok(!run.exited() && alive(pid), "the longest grace did not kill at once either");
    assert.ok(
      !run.frames.some((f) => f.type === "error" && f.code !== "E_PROTOCOL"),
      JSON.stringify(run.frames),
    );
    // A later terminate may bring SIGKILL closer: now.
    await run.send({ type: "terminate", grace_ms: 0 });
    const exit = await run.waitFor((f) => f.type === "exit");
    assert.equal(exit.signal, "KILL");
    assert.equal(exit.stop, "killed");
    assert.equal((await run.child.status).code, 137);
    await run.child.stderr.cancel();
  },
);

sessionTest(
  "the daemon: session.send of a terminate with a grace no timer can wait is refused; the session runs on",
  () =>
    withTempDir(async (dir) => {
      const daemon = await startDaemon(dir);
      const client = await DaemonClient.connect({ socketPath: daemon.socket });
      try {
        await client.call("session.create", {
          name: "stubborn",
          argv: ["/bin/sh", "-c", STUBBORN],
          cwd: "/",
          flags: { policy: "basic" },
        });
        const running = async () => {
          const { sessions } = await client.call("session.list", {}) as {
            sessions: { name: string; running: boolean }[];
          };
          return sessions.find((s) => s.name === "stubborn")?.running;
        };
        for (const grace_ms of TOO_LONG) {
          const refused = await client.call("session.send", {
            name: "stubborn",
            message: { v: 1, type: "terminate", grace_ms },
          }).then(() => null, (error: unknown) => error as Error);
          assert.ok(refused !== null, `grace ${grace_ms} was taken`);
          assert.match(refused.message, /grace_ms.*2147483647/, refused.message);
        }
        await sleep(1000);
        assert.equal(await running(), true, "still running 1 s later");
        await client.call("session.send", {
          name: "stubborn",
          message: { v: 1, type: "terminate", grace_ms: 2 ** 31 - 1 },
        });
        await sleep(1000);
        assert.equal(await running(), true, "the longest grace did not kill at once");
        await client.call("session.kill", { name: "stubborn" });
        assert.equal(await running(), false);
      } finally {
        client.close();
        await cleanUp(daemon);
      }
    }),
  60_000,
);

sessionTest(
  "agent tools: a yield_time_ms of 2^32 + 3000 is clamped (30 s), never a return at once",
  async () => {
    const cli = new CliProcess(["agent", ...UNSAFE]);
    const huge = 2 ** 32 + 3000;
    await cli.send({
      jsonrpc: "2.0",
      id: 1,
      method: "exec_command",
      params: { cmd: ["/bin/sh", "-c", "sleep 1.5; echo done"], yield_time_ms: huge },
    });
    await cli.send({
      jsonrpc: "2.0",
      id: 2,
      method: "exec_command",
      params: { cmd: ["/bin/cat"], yield_time_ms: 250 },
    });
    await cli.waitForStdout('"id":2');
    // Typing, then ^D: cat echoes and exits; the call returns at the exit, not at once.
    await cli.send({
      jsonrpc: "2.0",
      id: 3,
      method: "write_stdin",
      params: { session_id: "2", chars: "hello\n", keys: ["ctrl-d"], yield_time_ms: huge },
    });
    await cli.waitForStdout('"id":3');
    await cli.waitForStdout('"id":1');
    await cli.closeStdin();
    const { stdout } = await cli.result();
    const answers = new TextDecoder().decode(stdout).trim().split("\n").map((line) => JSON.parse(line));
    const result = (id: number) => answers.find((a) => a.id === id)?.result as Record<string, unknown>;
    assert.equal(result(1).returned_on, "exit", JSON.stringify(answers));
    assert.equal(result(1).output, "done\n");
    assert.ok((result(1).wall_time_ms as number) >= 1400, String(result(1).wall_time_ms));
    assert.equal(result(3).returned_on, "exit", JSON.stringify(answers));
    assert.match(String(result(3).output), /hello/);
  },
);
