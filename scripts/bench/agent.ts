/**
 * Agent round trips through `specter agent` (JSON-RPC over NDJSON on stdio), measured from this process:
 * the time from writing a request line to reading its response line.
 *
 * - `exec_command` of `true` (warm: after warm-up calls), sandboxed (the default preset) and without a
 *   sandbox;
 * - `write_stdin` of an expression to the python3 REPL (an echoing program that prints a prompt): the call
 *   returns at the prompt, after the prompt's settle time (150 ms of quiet, so a half-printed line is not
 *   taken for a prompt);
 * - the same `exec_command` of `true` as an MCP `tools/call`: through `specter mcp` on stdio (without a
 *   sandbox, beside the JSON-RPC figure), and through a daemon's `/mcp` (Streamable HTTP, one POST per
 *   call with the control token; the daemon's sessions run sandboxed, as a remote agent's always do).
 *
 *   deno run -A scripts/bench/agent.ts [--rounds 50]
 *
 * Acceptance (issue 13): `exec_command` of `true` ≤ 5 ms median, warm (checked without a sandbox; the
 * sandboxed figure is printed beside it).
 *
 * @module
 */
import {
  DENO,
  finish,
  intFlags,
  MAIN_TS,
  percentile,
  ROOT,
  round,
  runBenchmark,
  say,
  stats,
  table,
} from "./_common.ts";

const ACCEPT_EXEC_MS = 5;
const WARMUP = 5;

/** A `specter agent` process and a way to call it. */
class Agent {
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #lines: AsyncIterator<string>;
  #id = 0;

  constructor(flags: readonly string[], command = "agent") {
    this.#child = new Deno.Command(DENO, {
      args: ["run", "--quiet", "-A", MAIN_TS, command, ...flags],
      cwd: ROOT,
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    this.#writer = this.#child.stdin.getWriter();
    this.#lines = this.#child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines())[
      Symbol.asyncIterator
    ]();
  }

  /** Calls `method` and returns the result and the round trip in ms. */
  async call(method: string, params: unknown): Promise<{ result: Record<string, unknown>; ms: number }> {
    const id = ++this.#id;
    const line = JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n";
    const started = performance.now();
    await this.#writer.write(new TextEncoder().encode(line));
    for (;;) {
      const next = await this.#lines.next();
      if (next.done) throw new Error("specter agent ended");
      const message = JSON.parse(next.value);
      if (message.id !== id) continue;
      if (message.error) throw new Error(JSON.stringify(message.error));
      return { result: message.result, ms: performance.now() - started };
    }
  }

  async close(): Promise<void> {
    await this.#writer.close();
    await this.#child.status;
  }
}

function splitLines(): TransformStream<string, string> {
  let buffer = "";
  return new TransformStream({
    transform(chunk, controller) {
      buffer += chunk;
      const lines = buffer.split("\n");
      buffer = lines.pop()!;
      for (const line of lines) if (line !== "") controller.enqueue(line);
    },
  });
}

async function execTrue(flags: readonly string[], rounds: number): Promise<number[]> {
  const agent = new Agent(flags);
  const times: number[] = [];
  try {
    for (let i = 0; i < WARMUP + rounds; i++) {
      const { result, ms } = await agent.call("exec_command", { cmd: ["true"] });
      if (result.exit_code !== 0) throw new Error(`true exited ${JSON.stringify(result)}`);
      if (i >= WARMUP) times.push(ms);
      await agent.call("close_session", { session_id: result.session_id });
    }
  } finally {
    await agent.close();
  }
  return times;
}

/** `exec_command` of `true` as MCP `tools/call`s through `specter mcp` (stdio). */
async function mcpStdioTrue(flags: readonly string[], rounds: number): Promise<number[]> {
  const mcp = new Agent(flags, "mcp");
  const times: number[] = [];
  try {
    await mcp.call("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "bench", version: "0" },
    });
    for (let i = 0; i < WARMUP + rounds; i++) {
      const { result, ms } = await mcp.call("tools/call", {
        name: "exec_command",
        arguments: { cmd: ["true"] },
      });
      const structured = result.structuredContent as { exit_code?: number; session_id?: string };
      if (structured.exit_code !== 0) throw new Error(`true exited ${JSON.stringify(result)}`);
      if (i >= WARMUP) times.push(ms);
      await mcp.call("tools/call", {
        name: "close_session",
        arguments: { session_id: structured.session_id },
      });
    }
  } finally {
    await mcp.close();
  }
  return times;
}

/** `exec_command` of `true` as MCP `tools/call`s through a daemon's `/mcp` (Streamable HTTP). */
async function mcpHttpTrue(rounds: number): Promise<number[]> {
  const dir = await Deno.makeTempDir({ prefix: "specter-bench-mcp-" });
  const where = ["--socket", `${dir}/run/d.sock`, "--state-dir", `${dir}/state`];
  const daemon = new Deno.Command(DENO, {
    args: ["run", "--quiet", "-A", MAIN_TS, "daemon", ...where, "--bind", "127.0.0.1:0"],
    env: { XDG_STATE_HOME: `${dir}/xdg` },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const times: number[] = [];
  try {
    let info: { url: string; control_token: string } | null = null;
    for (let i = 0; i < 400 && info === null; i++) {
      try {
        info = JSON.parse(await Deno.readTextFile(`${dir}/state/remote.json`));
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 25)); // Not written yet.
      }
    }
    if (info === null) throw new Error("The daemon wrote no remote.json");
    const url = new URL("/mcp", info.url);
    const headers: Record<string, string> = {
      authorization: `Bearer ${info.control_token}`,
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
    };
    let id = 0;
    const post = async (
      method: string,
      params: unknown,
    ): Promise<{ result: Record<string, unknown>; ms: number }> => {
      const started = performance.now();
      const response = await fetch(url, {
        method: "POST",
        headers,
        body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }),
      });
      const text = await response.text();
      const ms = performance.now() - started;
      headers["mcp-session-id"] ??= response.headers.get("mcp-session-id") ?? "";
      // A tools/call is answered as SSE: its last event holds the answer.
      const data = response.headers.get("content-type")?.startsWith("text/event-stream")
        ? text.trim().split("\n").filter((l) => l.startsWith("data: ")).at(-1)!.slice(6)
        : text;
      const message = JSON.parse(data);
      if (message.error) throw new Error(JSON.stringify(message.error));
      return { result: message.result, ms };
    };
    await post("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "b", version: "0" },
    });
    for (let i = 0; i < WARMUP + rounds; i++) {
      const { result, ms } = await post("tools/call", {
        name: "exec_command",
        arguments: { cmd: ["/bin/true"] },
      });
      const structured = result.structuredContent as { exit_code?: number; session_id?: string };
      if (structured.exit_code !== 0) throw new Error(`true exited ${JSON.stringify(result)}`);
      if (i >= WARMUP) times.push(ms);
      await post("tools/call", { name: "close_session", arguments: { session_id: structured.session_id } });
    }
  } finally {
    daemon.kill("SIGTERM");
    await daemon.status;
    await Deno.remove(dir, { recursive: true }).catch(() => undefined); // Best effort: a temp directory.
  }
  return times;
}

async function replRoundTrip(rounds: number): Promise<number[]> {
  const agent = new Agent(["--unsafe-no-sandbox", "--ack-no-network-enforcement"]);
  const times: number[] = [];
  try {
    const { result } = await agent.call("exec_command", { cmd: ["python3", "-q"] });
    for (let i = 0; i < WARMUP + rounds; i++) {
      const { result: r, ms } = await agent.call("write_stdin", {
        session_id: result.session_id,
        chars: `${i}+1\r`,
      });
      if (r.returned_on !== "prompt" || !String(r.output).includes(String(i + 1))) {
        throw new Error(`unexpected ${JSON.stringify(r)}`);
      }
      if (i >= WARMUP) times.push(ms);
    }
  } finally {
    await agent.close();
  }
  return times;
}

async function main(): Promise<number> {
  const { rounds } = intFlags(Deno.args, { rounds: 50 });
  const summary = (values: number[]) => ({ ...stats(values), p99: percentile(values, 99) });
  const bare = summary(await execTrue(["--unsafe-no-sandbox", "--ack-no-network-enforcement"], rounds));
  const sandboxed = summary(await execTrue([], rounds));
  const repl = summary(await replRoundTrip(rounds));
  const mcpBare = summary(
    await mcpStdioTrue(["--unsafe-no-sandbox", "--ack-no-network-enforcement"], rounds),
  );
  const mcpHttp = summary(await mcpHttpTrue(rounds));
  const ms = (n: number) => round(n, 2).toString();
  say(table([
    ["call", "median ms", "p90 ms", "p99 ms", "max ms"],
    ["exec_command true (no sandbox)", ms(bare.median), ms(bare.p90), ms(bare.p99), ms(bare.max)],
    [
      "exec_command true (sandboxed)",
      ms(sandboxed.median),
      ms(sandboxed.p90),
      ms(sandboxed.p99),
      ms(sandboxed.max),
    ],
    ["write_stdin to python3 (prompt)", ms(repl.median), ms(repl.p90), ms(repl.p99), ms(repl.max)],
    [
      "MCP stdio tools/call true (no sandbox)",
      ms(mcpBare.median),
      ms(mcpBare.p90),
      ms(mcpBare.p99),
      ms(mcpBare.max),
    ],
    [
      "MCP HTTP tools/call true (daemon)",
      ms(mcpHttp.median),
      ms(mcpHttp.p90),
      ms(mcpHttp.p99),
      ms(mcpHttp.max),
    ],
  ]));
  const failures: string[] = [];
  if (!(bare.median <= ACCEPT_EXEC_MS)) {
    failures.push(`exec_command true: ${ms(bare.median)} ms median > ${ACCEPT_EXEC_MS} ms`);
  }
  return finish({
    benchmark: "agent",
    date: new Date().toISOString(),
    rounds,
    exec_true_ms: { no_sandbox: bare, sandboxed },
    write_stdin_repl_ms: repl,
    mcp_exec_true_ms: { stdio_no_sandbox: mcpBare, http_daemon: mcpHttp },
    acceptance: { exec_true_median_ms_max: ACCEPT_EXEC_MS },
  }, failures);
}

if (import.meta.main) await runBenchmark("agent", main);
