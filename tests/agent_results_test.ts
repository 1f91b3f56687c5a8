/**
 * Complete and truthful agent results, on real programs: `read_output` pages through every byte of a 4 MB
 * output (from the on-disk output log), a budget that dropped output says exactly which frames are gone, a
 * budget of a few tokens still shows the first and last words, 100 sessions started at once each get their
 * own output or `E_SESSION_LIMIT` (never an empty success), and `close_stdin` lets `wc` and `sort` finish.
 */
import assert from "node:assert/strict";
import { AgentTools } from "../src/agent/mod.ts";
import { AgentOutputLogs } from "../src/daemon/mod.ts";
import type { ToolResult } from "../src/protocol/mod.ts";
import { DENO, NO_SANDBOX, ROOT, withTempDir } from "./_helpers.ts";
import { withLoggedTools } from "./_agent_tools.ts";
import { cleanUp, startDaemon, whereArgs } from "./_daemon.ts";

const sanitize = { sanitizeOps: false, sanitizeResources: false };

/** A JSON-RPC client of a `specter agent` process: one request at a time, answers matched by id. */
class AgentClient {
  readonly child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  #next = 1;
  #buffer = "";
  #answers = new Map<number, Record<string, unknown>>();
  #waiters = new Map<number, (answer: Record<string, unknown>) => void>();
  readonly #reader: Promise<void>;

  constructor(args: string[]) {
    this.child = new Deno.Command(DENO, {
      args: ["run", "--quiet", "-A", `${ROOT}/main.ts`, ...args],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
      cwd: ROOT,
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    this.#reader = this.#read();
  }

  async #read(): Promise<void> {
    const decoder = new TextDecoder();
    for await (const chunk of this.child.stdout) {
      this.#buffer += decoder.decode(chunk, { stream: true });
      let nl;
      while ((nl = this.#buffer.indexOf("\n")) >= 0) {
        const message = JSON.parse(this.#buffer.slice(0, nl)) as Record<string, unknown>;
        this.#buffer = this.#buffer.slice(nl + 1);
        const id = message.id as number;
        const waiter = this.#waiters.get(id);
        if (waiter !== undefined) {
          this.#waiters.delete(id);
          waiter(message);
        } else this.#answers.set(id, message);
      }
    }
  }

  /** Sends requests at once (in one write) and resolves with their answers, in order. */
  async callAll(calls: { method: string; params: unknown }[]): Promise<Record<string, unknown>[]> {
    const ids = calls.map(() => this.#next++);
    const answers = ids.map((id) =>
      new Promise<Record<string, unknown>>((resolve) => {
        const early = this.#answers.get(id);
        if (early !== undefined) resolve(early);
        else this.#waiters.set(id, resolve);
      })
    );
    const lines = calls.map((call, i) => JSON.stringify({ jsonrpc: "2.0", id: ids[i]!, ...call }) + "\n");
    await this.#writer.write(new TextEncoder().encode(lines.join("")));
    return await Promise.all(answers);
  }

  async call(method: string, params: unknown): Promise<Record<string, unknown>> {
    return (await this.callAll([{ method, params }]))[0]!;
  }

  /** Peak resident memory of the agent process so far (kB, from /proc). */
  peakRssKb(): number {
    const status = Deno.readTextFileSync(`/proc/${this.child.pid}/status`);
    return Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)![1]);
  }

  async close(): Promise<number> {
    await this.#writer.close();
    const status = await this.child.status;
    await this.#reader;
    return status.code;
  }
}

const AGENT_ARGS = ["agent", "--unsafe-no-sandbox", "--ack-no-network-enforcement"];

/** Pages through a session's output from seq 0 in `mode`; the pages, and their text joined. */
async function pageAll(
  read: (from: number, offset: number) => Promise<ToolResult>,
): Promise<{ pages: ToolResult[]; text: string }> {
  const pages: ToolResult[] = [];
  let from = 0;
  let offset = 0;
  for (;;) {
    const page = await read(from, offset);
    pages.push(page);
    assert.ok(
      page.next_from_seq !== undefined && page.next_from_offset !== undefined,
      "a page says where next",
    );
    if (!page.more) break;
    // Every page moves on: never the same start twice.
    assert.ok(
      page.next_from_seq > from || (page.next_from_seq === from && page.next_from_offset > offset),
      `stuck at ${from}/${offset}`,
    );
    from = page.next_from_seq;
    offset = page.next_from_offset;
    assert.ok(pages.length < 10_000, "paging ends");
  }
  return { pages, text: pages.map((p) => p.output).join("") };
}

/** Asserts `text` is exactly the lines 1…n (`seq 1 n`, with or without a terminal's \r). */
function assertSeq(text: string, n: number): void {
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === "") lines.pop();
  assert.equal(lines.length, n, `${lines.length} lines, not ${n}`);
  for (let i = 0; i < n; i++) {
    if (lines[i] !== String(i + 1)) assert.fail(`line ${i + 1} is ${JSON.stringify(lines[i])}`);
  }
}

Deno.test({
  name: "agent results: seq 1 583000 (4 MB) through specter agent, then read_output from seq 0 pages " +
    "through all 583000 lines in order, none missing or repeated, each page within max_output_tokens",
  ...sanitize,
  async fn() {
    const agent = new AgentClient(AGENT_ARGS);
    try {
      const ran = (await agent.call("exec_command", { cmd: "seq 1 583000", yield_time_ms: 30_000 }))
        .result as ToolResult;
      assert.equal(ran.exit_code, 0, JSON.stringify(ran).slice(0, 500));
      assert.equal(ran.truncated, true);
      // The marker promises only what the log can give: the exact call, from the output's first frame.
      assert.match(
        ran.output,
        new RegExp(
          `read_output \\{"session_id": "${ran.session_id}", "from_seq": ${ran.from_seq}, "to_seq": ${ran.to_seq}\\} ` +
            "pages through all of it",
        ),
      );
      assert.ok(!ran.output.includes("returns all of it"));
      for (const mode of ["raw", "compact"] as const) {
        const { pages, text } = await pageAll(async (from, offset) =>
          (await agent.call("read_output", {
            session_id: ran.session_id,
            from_seq: from,
            from_offset: offset,
            token_mode: mode,
          })).result as ToolResult
        );
        assertSeq(text, 583_000);
        assert.ok(pages.length > 50, `${pages.length} pages`);
        for (const page of pages) {
          assert.equal(page.truncated, false);
          assert.equal(page.dropped, undefined);
          assert.ok(page.original_token_count <= 10_000, `${page.original_token_count} tokens`);
        }
      }
      const peakMb = agent.peakRssKb() / 1024;
      console.log(`specter agent peak RSS after 4 MB and two pagings: ${peakMb.toFixed(0)} MB`);
      assert.equal(await agent.close(), 0);
    } finally {
      await agent.child.status;
    }
  },
});

Deno.test({
  name:
    "agent results: a budget that dropped output says exactly which frames are gone, and the rest pages " +
    "on without a gap; no marker offers what the log no longer holds",
  ...sanitize,
  fn: () =>
    withLoggedTools(async (tools, logs) => {
      const ran = await tools.execCommand({ cmd: "seq 1 200000", yield_time_ms: 30_000, token_mode: "raw" });
      assert.equal(ran.exit_code, 0);
      assert.ok(logs.bytes() <= 256 * 1024 + 64 * 1024 + 16 * 1024, `${logs.bytes()} bytes on disk`);
      assert.match(ran.output, /frames 0-\d+ were dropped by the output log's budget; read_output/);
      const { pages, text } = await pageAll((from, offset) =>
        tools.readOutput({
          session_id: ran.session_id!,
          from_seq: from,
          from_offset: offset,
          token_mode: "raw",
        })
      );
      const first = pages[0]!;
      assert.equal(first.truncated, true);
      assert.equal(first.dropped?.from_seq, 0);
      const oldest = first.dropped!.to_seq + 1;
      assert.match(
        first.output,
        new RegExp(`^\\[frames 0-${oldest - 1} were dropped by the output log's budget`),
      );
      for (const page of pages.slice(1)) assert.equal(page.dropped, undefined);
      // What is held is the end of the output, whole: the last line, and every line after the first held.
      const lines = text.split("\n").slice(1).join("\n").split(/\r?\n/).filter((l) => /^\d+$/.test(l));
      assert.equal(lines.at(-1), "200000");
      for (let i = 2; i < lines.length; i++) {
        if (Number(lines[i]) !== Number(lines[i - 1]) + 1) assert.fail(`gap after ${lines[i - 1]}`);
      }
      assert.ok(lines.length < 200_000 && lines.length > 10_000, `${lines.length} lines held`);
    }, { segmentBytes: 64 * 1024, sessionBytes: 256 * 1024, totalBytes: 256 * 1024 }),
});

Deno.test({
  name: "agent results: the total budget drops the oldest segments of any session",
  ...sanitize,
  fn: () =>
    withLoggedTools(async (tools, logs) => {
      const a = await tools.execCommand({ cmd: "seq 1 100000", yield_time_ms: 30_000 });
      const b = await tools.execCommand({ cmd: "seq 100001 200000", yield_time_ms: 30_000 });
      assert.equal(a.exit_code, 0);
      assert.equal(b.exit_code, 0);
      // The budget drops whole closed segments; each session's open segment may pass its 64 KiB by one
      // frame: a terminal read of up to 64 KiB, as JSON (seq's "\r\n" grows to 4 characters) under 96 KiB.
      assert.ok(logs.bytes() <= 512 * 1024 + 2 * (64 + 96) * 1024, `${logs.bytes()} bytes on disk`);
      const readA = await tools.readOutput({ session_id: a.session_id!, from_seq: 0 });
      assert.equal(readA.dropped?.from_seq, 0, "the older session lost its oldest frames");
      assert.equal(readA.truncated, true);
    }, { segmentBytes: 64 * 1024, sessionBytes: 1024 * 1024, totalBytes: 512 * 1024 }),
});

Deno.test({
  name: "agent results: a max_output_tokens of 1 to 5 still returns the first and the last words",
  ...sanitize,
  fn: () =>
    withLoggedTools(async (tools) => {
      for (const budget of [1, 3, 5]) {
        const ran = await tools.execCommand({
          cmd: "seq 1 50000",
          yield_time_ms: 30_000,
          max_output_tokens: budget,
        });
        assert.equal(ran.truncated, true);
        const lines = ran.output.split("\n");
        assert.equal(lines[0], "1", `${budget}: ${ran.output}`);
        assert.ok(lines.some((line) => line.trim() === "50000"), `${budget}: ${ran.output}`);
        const page = await tools.readOutput({
          session_id: ran.session_id!,
          from_seq: 0,
          max_output_tokens: budget,
        });
        assert.ok(/\b1\b/.test(page.output), `${budget}: ${page.output}`);
        assert.equal(page.more, true);
      }
    }),
});

Deno.test({
  name: "agent results: 100 exec_command calls at once through specter agent: each answer is its own " +
    "output or E_SESSION_LIMIT, never an empty success",
  ...sanitize,
  async fn() {
    const agent = new AgentClient(AGENT_ARGS);
    try {
      const answers = await agent.callAll(
        Array.from({ length: 100 }, (_, i) => ({
          method: "exec_command",
          params: { cmd: `echo id-${i}`, yield_time_ms: 30_000 },
        })),
      );
      let ok = 0;
      let limited = 0;
      for (const [i, answer] of answers.entries()) {
        const error = answer.error as { data?: { code?: string } } | undefined;
        if (error !== undefined) {
          assert.equal(error.data?.code, "E_SESSION_LIMIT", JSON.stringify(answer));
          limited++;
          continue;
        }
        const result = answer.result as ToolResult;
        assert.equal(result.exit_code, 0, JSON.stringify(result));
        assert.equal(result.output.trim(), `id-${i}`, JSON.stringify(result));
        ok++;
      }
      assert.equal(ok + limited, 100);
      assert.ok(ok >= 64, `${ok} answered, ${limited} refused`);
      console.log(`100 at once: ${ok} answered with their output, ${limited} E_SESSION_LIMIT`);
      assert.equal(await agent.close(), 0);
    } finally {
      await agent.child.status;
    }
  },
});

Deno.test({
  name: "agent results: a session with a call in progress is never pruned; when all are busy the next " +
    "start is E_SESSION_LIMIT and starts nothing",
  ...sanitize,
  fn: () =>
    withLoggedTools(
      async (tools) => {
        const slow = [
          tools.execCommand({ cmd: "sleep 1; echo one", yield_time_ms: 10_000 }),
          tools.execCommand({ cmd: "sleep 2; echo two", yield_time_ms: 10_000 }),
        ];
        await assert.rejects(
          tools.execCommand({ cmd: "echo three" }),
          (e: unknown) => (e as { code?: string }).code === "E_SESSION_LIMIT",
        );
        assert.equal(tools.listSessions().sessions.length, 2);
        const [one, two] = await Promise.all(slow);
        assert.equal(one!.output.trim(), "one");
        assert.equal(two!.output.trim(), "two");
        // Now nothing is owed: the least recently used makes room (2 sessions: only the newest is protected).
        const three = await tools.execCommand({ cmd: "echo three" });
        assert.equal(three.output.trim(), "three");
        assert.equal(three.pruned, one!.session_id);
      },
      {},
      2,
    ),
});

/** True when `name` is a program on the PATH. */
function installed(name: string): boolean {
  return (Deno.env.get("PATH") ?? "").split(":").some((dir) => {
    try {
      return Deno.statSync(`${dir}/${name}`).isFile;
    } catch {
      return false;
    }
  });
}

Deno.test({
  name: "agent results: close_stdin ends the input of a tty false session: wc, sort (and jq -s) finish",
  ...sanitize,
  fn: () =>
    withLoggedTools(async (tools) => {
      const wc = await tools.execCommand({ cmd: "wc -l", tty: false, yield_time_ms: 500 });
      assert.equal(wc.running, true, "wc waits for the end of its input");
      const counted = await tools.writeStdin({
        session_id: wc.session_id!,
        chars: "a\nb\nc\n",
        close_stdin: true,
      });
      assert.equal(counted.exit_code, 0, JSON.stringify(counted));
      assert.equal(counted.output.trim(), "3");
      const sort = await tools.execCommand({ cmd: ["sort"], tty: false, yield_time_ms: 500 });
      await tools.writeStdin({ session_id: sort.session_id!, chars: "pear\napple\n", yield_time_ms: 250 });
      const sorted = await tools.writeStdin({
        session_id: sort.session_id!,
        chars: "fig\n",
        close_stdin: true,
      });
      assert.equal(sorted.exit_code, 0);
      assert.deepEqual(sorted.output.trim().split("\n"), ["apple", "fig", "pear"]);
      if (installed("jq")) {
        const jq = await tools.execCommand({ cmd: ["jq", "-cs", "add"], tty: false, yield_time_ms: 500 });
        const added = await tools.writeStdin({
          session_id: jq.session_id!,
          chars: "1 2 3",
          close_stdin: true,
        });
        assert.equal(added.output.trim(), "6");
      }
      // Its output still comes after the input ended; typing again is refused.
      const cat = await tools.execCommand({
        cmd: "cat; sleep 0.3; echo after",
        tty: false,
        yield_time_ms: 500,
      });
      const closed = await tools.writeStdin({ session_id: cat.session_id!, chars: "x\n", close_stdin: true });
      assert.match(closed.output, /x\n(?:[^]*)after/);
      const open = await tools.execCommand({ cmd: ["cat"], tty: false, yield_time_ms: 250 });
      await tools.writeStdin({ session_id: open.session_id!, close_stdin: true });
      await assert.rejects(
        tools.writeStdin({ session_id: open.session_id!, chars: "late\n" }),
        (e: unknown) => (e as { code?: string }).code === "E_SESSION_CLOSED",
      );
      // On a terminal there is no end of input to close: a typed error names ctrl-d.
      const tty = await tools.execCommand({ cmd: ["cat"], yield_time_ms: 250 });
      await assert.rejects(
        tools.writeStdin({ session_id: tty.session_id!, close_stdin: true }),
        (e: unknown) => (e as { code?: string }).code === "E_USAGE" && /ctrl-d/.test(String(e)),
      );
    }),
});

Deno.test({
  name: "agent results: agent --daemon pages through every line from the session's own durable frame log",
  ...sanitize,
  async fn() {
    await withTempDir(async (dir) => {
      const daemon = await startDaemon(dir);
      try {
        const agent = new AgentClient([
          "agent",
          "--daemon",
          ...whereArgs(daemon),
          "--no-autostart",
          "--unsafe-no-sandbox",
          "--ack-no-network-enforcement",
        ]);
        try {
          const ran = (await agent.call("exec_command", { cmd: "seq 1 300000", yield_time_ms: 30_000 }))
            .result as ToolResult;
          assert.equal(ran.exit_code, 0, JSON.stringify(ran).slice(0, 400));
          assert.match(ran.session_id!, /^agent-\d+$/);
          assert.match(ran.output, /pages through all of it/);
          const { text } = await pageAll(async (from, offset) =>
            (await agent.call("read_output", {
              session_id: ran.session_id,
              from_seq: from,
              from_offset: offset,
              token_mode: "raw",
              max_output_tokens: 50_000,
            })).result as ToolResult
          );
          assertSeq(text, 300_000);
          // The keeper holds a daemon session's socket: it ends the input after what was typed (see
          // agent_daemon_close_stdin_test.ts).
          const cat = (await agent.call("exec_command", { cmd: ["cat"], tty: false, yield_time_ms: 250 }))
            .result as ToolResult;
          const closed = await agent.call("write_stdin", {
            session_id: cat.session_id,
            chars: "still\n",
            close_stdin: true,
          });
          assert.match((closed.result as ToolResult).output, /still/);
          assert.equal((closed.result as ToolResult).exit_code, 0, JSON.stringify(closed));
          assert.equal(await agent.close(), 0);
        } finally {
          await agent.child.status;
        }
      } finally {
        await cleanUp(daemon);
      }
    });
  },
});

Deno.test({
  name:
    "agent results: an output log that fails (a full disk) keeps what it has; the rest comes from memory " +
    "with its gap named, and no marker promises the lost part",
  ...sanitize,
  async fn() {
    const root = Deno.makeTempDirSync({ prefix: "specter-results-" });
    const logs = new AgentOutputLogs();
    const tools = new AgentTools({
      base: { sandbox: NO_SANDBOX, cwd: ROOT },
      outputLog: (id) => {
        const log = logs.open(`${root}/${id}`, id);
        let appended = 0;
        return {
          ...log,
          oldest: () => log.oldest(),
          read: (from, to, limit) => log.read(from, to, limit),
          close: () => log.close(),
          remove: () => log.remove(),
          append: (frame) => {
            if (++appended > 5) throw new Error("No space left on device (a test)"); // At most 5 reads of 64 KiB: the gap is never inside the memory window.
            log.append(frame);
          },
        };
      },
    });
    try {
      const ran = await tools.execCommand({ cmd: "seq 1 300000", yield_time_ms: 30_000, token_mode: "raw" });
      assert.equal(ran.exit_code, 0);
      assert.ok(!/pages through all of it/.test(ran.output), "no promise the log cannot keep");
      const { pages, text } = await pageAll((from, offset) =>
        tools.readOutput({
          session_id: ran.session_id!,
          from_seq: from,
          from_offset: offset,
          token_mode: "raw",
        })
      );
      const gap = pages.find((p) => p.dropped !== undefined)?.dropped;
      // The log kept frames 0-4; the memory window's head (its first 64 KiB) may hold more after them when
      // reads were small, so the gap starts at 5 or later.
      assert.ok(gap !== undefined && gap.from_seq >= 5, JSON.stringify(gap));
      // What the log kept, then the gap named where it is, then what memory held: each side in order, once;
      // the line the gap cut is a fragment on either side of it.
      const marker = `[frames ${gap.from_seq}-${gap.to_seq} are no longer held (no output log kept them, ` +
        "and the memory window passed them); they cannot be read]\n";
      const [kept, held, ...rest] = text.split(marker);
      assert.equal(rest.length, 0);
      const keptLines = kept!.split("\r\n").slice(0, -1).map(Number);
      const heldLines = held!.split("\r\n").slice(1).filter((l) => l !== "").map(Number);
      keptLines.forEach((n, i) => assert.equal(n, i + 1));
      heldLines.forEach((n, i) => assert.equal(n, heldLines[0]! + i));
      assert.equal(heldLines.at(-1), 300_000);
      assert.ok(heldLines[0]! > keptLines.at(-1)! + 1);
    } finally {
      await tools.close();
      Deno.removeSync(root, { recursive: true });
    }
  },
});
