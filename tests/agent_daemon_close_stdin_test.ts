/**
 * `close_stdin` in sessions the daemon runs, on real programs: the keeper holds the program's socket and
 * relays input, and on the daemon's `close_input` it writes every byte typed before it, then shuts the
 * socket's writing side down. Through `agent --daemon`, `wc -l` counts 3 and `sort` sorts; typing after the
 * end is `E_SESSION_CLOSED`, a terminal is `E_USAGE`; a daemon killed and restarted knows which inputs were
 * closed (and still closes one that was not). On the keeper's own socket: a terminal session is refused
 * typed, and input that arrives after the `close_input` that counts it still reaches the program first.
 * Through the daemon's `/mcp` the same code runs.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { KeeperEvent, ToolResult } from "../src/protocol/mod.ts";
import { closeQuietly, connectUnix, libc, receiveFds, sendFds } from "../src/pty/mod.ts";
import { keeperPaths, MAX_KEEPER_MESSAGE } from "../src/keeper/mod.ts";
import { DENO, ROOT, withTempDir, withTimeout } from "./_helpers.ts";
import { cleanUp, keeperPid, restart, startDaemon, type TestDaemon, whereArgs } from "./_daemon.ts";
import { withRemoteDaemon } from "./_remote.ts";

const sanitize = { sanitizeOps: false, sanitizeResources: false };

/** An agent call's result, or its error (`code` is the error's `data.code`). */
type Answer = Partial<ToolResult> & {
  code?: string;
  message?: string;
  sessions?: { session_id: string; running: boolean }[];
};

/** `specter agent --daemon` on stdio: one JSON-RPC call at a time. */
class Agent {
  readonly child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #lines: AsyncIterator<string>;
  #next = 1;

  constructor(daemon: TestDaemon) {
    this.child = new Deno.Command(DENO, {
      args: [
        "run",
        "--quiet",
        "-A",
        `${ROOT}/main.ts`,
        "agent",
        "--daemon",
        ...whereArgs(daemon),
        "--no-autostart",
        "--unsafe-no-sandbox",
        "--ack-no-network-enforcement",
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
      cwd: ROOT,
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    this.#lines = lines(this.child.stdout)[Symbol.asyncIterator]();
  }

  /** The call's result, or its error's `data.code` as `{ code }`. */
  async call(method: string, params: unknown): Promise<Answer> {
    const id = this.#next++;
    await this.#writer.write(
      new TextEncoder().encode(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n"),
    );
    for (;;) {
      const next = await this.#lines.next();
      if (next.done === true) throw new Error("The agent ended");
      const message = JSON.parse(next.value) as Record<string, unknown>;
      if (message.id !== id) continue;
      if (message.error !== undefined) {
        const error = message.error as { message: string; data?: { code?: string } };
        return { code: error.data?.code, message: error.message };
      }
      return message.result as Answer;
    }
  }

  async close(): Promise<void> {
    await this.#writer.close();
    await this.child.status;
  }
}

async function* lines(stream: ReadableStream<Uint8Array>): AsyncIterable<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of stream) {
    buffer += decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      yield buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
    }
  }
}

Deno.test({
  name: "agent --daemon: close_stdin ends a tty false session's input through the keeper (wc, sort), " +
    "typing after it is E_SESSION_CLOSED, a terminal E_USAGE, and a restarted daemon knows which were closed",
  ...sanitize,
  async fn() {
    await withTempDir(async (dir) => {
      const daemon = await startDaemon(dir);
      try {
        await withTimeout(
          (async () => {
            let agent = new Agent(daemon);
            const wc = await agent.call("exec_command", { cmd: "wc -l", tty: false, yield_time_ms: 500 });
            assert.equal(wc.running, true, JSON.stringify(wc));
            const counted = await agent.call("write_stdin", {
              session_id: wc.session_id,
              chars: "a\nb\nc\n",
              close_stdin: true,
            });
            assert.equal(counted.exit_code, 0, JSON.stringify(counted));
            assert.equal(String(counted.output).trim(), "3");

            const sort = await agent.call("exec_command", { cmd: ["sort"], tty: false, yield_time_ms: 500 });
            await agent.call("write_stdin", {
              session_id: sort.session_id,
              chars: "pear\napple\n",
              yield_time_ms: 250,
            });
            const sorted = await agent.call("write_stdin", {
              session_id: sort.session_id,
              chars: "fig\n",
              close_stdin: true,
            });
            assert.equal(sorted.exit_code, 0, JSON.stringify(sorted));
            assert.deepEqual(String(sorted.output).trim().split("\n"), ["apple", "fig", "pear"]);

            // The program goes on after its input ended: typing is refused, closing again changes nothing.
            const cat = await agent.call("exec_command", {
              cmd: "cat; echo input-ended; sleep 120",
              tty: false,
              yield_time_ms: 500,
            });
            const ended = await agent.call("write_stdin", {
              session_id: cat.session_id,
              chars: "x\n",
              close_stdin: true,
            });
            assert.match(String(ended.output), /x\n(?:[^]*)input-ended/, JSON.stringify(ended));
            assert.equal(ended.running, true);
            const late = await agent.call("write_stdin", { session_id: cat.session_id, chars: "late\n" });
            assert.equal(late.code, "E_SESSION_CLOSED", JSON.stringify(late));
            const again = await agent.call("write_stdin", {
              session_id: cat.session_id,
              close_stdin: true,
              yield_time_ms: 250,
            });
            assert.equal(again.code, undefined, JSON.stringify(again));

            // A terminal has no end of input: typed, with the ctrl-d hint.
            const tty = await agent.call("exec_command", { cmd: ["cat"], yield_time_ms: 250 });
            const refused = await agent.call("write_stdin", {
              session_id: tty.session_id,
              close_stdin: true,
            });
            assert.equal(refused.code, "E_USAGE", JSON.stringify(refused));
            assert.match(refused.message ?? "", /ctrl-d/);

            // One whose input is still open, with a line typed before the daemon dies.
            const open = await agent.call("exec_command", { cmd: "wc -l", tty: false, yield_time_ms: 250 });
            await agent.call("write_stdin", {
              session_id: open.session_id,
              chars: "one\n",
              yield_time_ms: 250,
            });
            await agent.close();

            const keeper = keeperPid(daemon);
            daemon.process.kill("SIGKILL");
            await daemon.process.status;
            await restart(daemon);
            assert.equal(keeperPid(daemon), keeper, "the same keeper holds the sessions");

            agent = new Agent(daemon);
            const listed = await agent.call("list_sessions", {});
            assert.ok(
              listed.sessions?.some((s) => s.session_id === cat.session_id && s.running),
              JSON.stringify(listed),
            );
            // The keeper told the new daemon this input was closed.
            const lateAfter = await agent.call("write_stdin", {
              session_id: cat.session_id,
              chars: "late\n",
            });
            assert.equal(lateAfter.code, "E_SESSION_CLOSED", JSON.stringify(lateAfter));
            const againAfter = await agent.call("write_stdin", {
              session_id: cat.session_id,
              close_stdin: true,
              yield_time_ms: 250,
            });
            assert.equal(againAfter.code, undefined, JSON.stringify(againAfter));
            // And that this one runs without a terminal: its input is closed through the new relay.
            const two = await agent.call("write_stdin", {
              session_id: open.session_id,
              chars: "two\n",
              close_stdin: true,
            });
            assert.equal(two.exit_code, 0, JSON.stringify(two));
            assert.equal(String(two.output).trim(), "2");
            // Still a terminal after the restart.
            const ttyAfter = await agent.call("write_stdin", {
              session_id: tty.session_id,
              close_stdin: true,
            });
            assert.equal(ttyAfter.code, "E_USAGE", JSON.stringify(ttyAfter));
            await agent.call("close_session", { session_id: cat.session_id, force: true });
            await agent.close();
          })(),
          90_000,
          "agent --daemon close_stdin",
        );
      } finally {
        await cleanUp(daemon);
      }
    });
  },
});

/** A raw connection to a keeper's socket, as the daemon has one. */
class KeeperLine {
  readonly fd: number;
  readonly #buffer = new Uint8Array(MAX_KEEPER_MESSAGE);

  private constructor(fd: number) {
    this.fd = fd;
  }

  /** Connects, waiting for the keeper to listen. */
  static async open(stateDir: string): Promise<KeeperLine> {
    for (let i = 0; i < 400; i++) {
      const fd = connectUnix(keeperPaths(stateDir).socket, "seqpacket");
      if (fd !== null) return new KeeperLine(fd);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error("The keeper did not come up");
  }

  send(request: Record<string, unknown>): void {
    sendFds(this.fd, [], new TextEncoder().encode(JSON.stringify(request)));
  }

  /** The next event that `match` takes (others are skipped; their descriptors closed). */
  async next(match: (event: KeeperEvent) => boolean): Promise<{ event: KeeperEvent; fds: number[] }> {
    for (let i = 0; i < 1000; i++) {
      const message = receiveFds(this.fd, { buffer: this.#buffer, dontWait: true, maxFds: 8 });
      if (message === null) throw new Error("The keeper closed the connection");
      if (message === "again") {
        await new Promise((resolve) => setTimeout(resolve, 10));
        continue;
      }
      const event = JSON.parse(new TextDecoder().decode(message.payload)) as KeeperEvent;
      if (match(event)) return { event, fds: message.fds };
      for (const fd of message.fds) closeQuietly(fd);
    }
    throw new Error("No such event from the keeper");
  }

  close(): void {
    closeQuietly(this.fd);
  }
}

/** Reads the relay until it ends (the keeper shuts its side down once the program's output ended). */
async function readAll(fd: number): Promise<string> {
  const buffer = new Uint8Array(4096);
  let text = "";
  for (let i = 0; i < 1000; i++) {
    const n = Number(libc().sym.read(fd, buffer, BigInt(buffer.length)));
    if (n === 0) return text;
    if (n > 0) text += new TextDecoder().decode(buffer.subarray(0, n));
    else await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`The relay did not end; it gave: ${JSON.stringify(text)}`);
}

Deno.test({
  name: "keeper: close_input is refused typed for a terminal; input sent after the close_input that counts " +
    "it still reaches the program before end-of-file; a new connection is told the input was closed",
  ...sanitize,
  async fn() {
    await withTempDir(async (dir) => {
      const stateDir = join(dir, "state");
      Deno.mkdirSync(stateDir, { mode: 0o700 });
      const keeper = new Deno.Command(DENO, {
        args: ["run", "-A", join(ROOT, "main.ts"), "keeper", "--state-dir", stateDir],
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn();
      try {
        await withTimeout(
          (async () => {
            let line = await KeeperLine.open(stateDir);
            await line.next((e) => e.op === "hello");
            const spawn = { env: { PATH: "/usr/bin:/bin" }, cols: 80, rows: 24, targets: [] };
            line.send({ op: "spawn", id: "term", argv: ["/bin/cat"], tty: true, ...spawn });
            const term = await line.next((e) => e.op === "spawned" || e.op === "error");
            assert.equal(term.event.op, "spawned", JSON.stringify(term.event));
            line.send({ op: "close_input", id: "term", after: 0 });
            const refusal = await line.next((e) => e.op === "error");
            assert.equal(refusal.event.op === "error" && refusal.event.code, "E_USAGE");
            assert.equal(refusal.event.op === "error" && refusal.event.id, "term");
            line.send({ op: "close_input", id: "nobody", after: 0 });
            const unknown = await line.next((e) => e.op === "error");
            assert.equal(unknown.event.op === "error" && unknown.event.id, "nobody");

            line.send({ op: "spawn", id: "wc", argv: ["/usr/bin/wc", "-l"], tty: false, ...spawn });
            const wc = await line.next((e) => e.op === "spawned" || e.op === "error");
            assert.equal(wc.event.op, "spawned", JSON.stringify(wc.event));
            const relay = wc.fds[1]!;
            // The end is announced before its bytes are sent: the keeper waits for them.
            line.send({ op: "close_input", id: "wc", after: 6 });
            await new Promise((resolve) => setTimeout(resolve, 100));
            const input = new TextEncoder().encode("a\nb\nc\n");
            assert.equal(Number(libc().sym.write(relay, input, BigInt(input.length))), input.length);
            assert.equal((await readAll(relay)).trim(), "3");

            // The state outlives the connection: a new daemon's `kept` says so.
            line.close();
            line = await KeeperLine.open(stateDir);
            const kept: Record<string, { tty: boolean; input_closed: boolean }> = {};
            for (;;) {
              const { event } = await line.next((e) => e.op === "kept" || e.op === "hello");
              if (event.op === "hello") break;
              if (event.op === "kept") kept[event.session.id] = event.session;
            }
            assert.equal(kept.wc?.tty, false);
            assert.equal(kept.wc?.input_closed, true);
            assert.equal(kept.term?.tty, true);
            assert.equal(kept.term?.input_closed, false);
            line.send({ op: "release", id: "term" });
            line.send({ op: "release", id: "wc" });
            for (const fd of [...term.fds, ...wc.fds]) closeQuietly(fd);
            line.close();
            assert.equal((await keeper.status).code, 0, "the keeper ends with no session and no daemon");
          })(),
          60_000,
          "keeper close_input",
        );
      } finally {
        try {
          keeper.kill("SIGKILL");
        } catch {
          // Ended already.
        }
        await keeper.status;
      }
    });
  },
});

Deno.test({
  name: "mcp http: close_stdin through the daemon's /mcp ends a tty false session's input (wc -l counts 3)",
  ...sanitize,
  async fn() {
    await withTempDir((dir) =>
      withRemoteDaemon(join(dir, "d"), [], async (daemon) => {
        const transport = new StreamableHTTPClientTransport(new URL(`${daemon.origin}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${daemon.info.control_token}` } },
        });
        const client = new Client({ name: "specter-close-stdin-test", version: "1.0.0" });
        await client.connect(transport);
        try {
          const started = await client.callTool({
            name: "exec_command",
            arguments: { cmd: "wc -l", tty: false, yield_time_ms: 500 },
          });
          const id = (started.structuredContent as ToolResult).session_id!;
          assert.equal((started.structuredContent as ToolResult).running, true, JSON.stringify(started));
          const counted = await client.callTool({
            name: "write_stdin",
            arguments: { session_id: id, chars: "a\nb\nc\n", close_stdin: true },
          });
          const result = counted.structuredContent as ToolResult;
          assert.equal(result.exit_code, 0, JSON.stringify(counted));
          assert.equal(result.output.trim(), "3");
        } finally {
          await client.close();
        }
      })
    );
  },
});
