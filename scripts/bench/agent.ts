/**
 * Agent round trips through `specter agent` (JSON-RPC over NDJSON on stdio), measured from this process:
 * the time from writing a request line to reading its response line.
 *
 * - `exec_command` of `true` (warm: after warm-up calls), sandboxed (the default preset) and without a
 *   sandbox;
 * - `write_stdin` of an expression to the python3 REPL (an echoing program that prints a prompt): the call
 *   returns at the prompt, after the prompt's settle time (150 ms of quiet, so a half-printed line is not
 *   taken for a prompt).
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

  constructor(flags: readonly string[]) {
    this.#child = new Deno.Command(DENO, {
      args: ["run", "--quiet", "-A", MAIN_TS, "agent", ...flags],
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
    acceptance: { exec_true_median_ms_max: ACCEPT_EXEC_MS },
  }, failures);
}

if (import.meta.main) await runBenchmark("agent", main);
