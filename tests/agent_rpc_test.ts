/**
 * `specter agent` through the real CLI: JSON-RPC 2.0 over NDJSON on stdio. Bad input of every kind gets
 * its standard error and the server goes on serving; two subscribers read one session in two views; the
 * tool definitions print for each flavour.
 */
import assert from "node:assert/strict";
import { CliProcess, runCli } from "./_helpers.ts";
import { JsonRpcResponseSchema } from "../src/protocol/mod.ts";

const sanitize = { sanitizeOps: false, sanitizeResources: false };

/** The JSON lines of `stdout`, validated as JSON-RPC responses or notifications. */
function messages(stdout: Uint8Array): Record<string, unknown>[] {
  return new TextDecoder().decode(stdout).split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

Deno.test({
  name: "agent rpc: malformed JSON, a non-request, an unknown method, bad params and a 10 MB line each get " +
    "their error, and the server still answers the request after them",
  ...sanitize,
  async fn() {
    const cli = new CliProcess(["agent", "--unsafe-no-sandbox", "--ack-no-network-enforcement"]);
    await cli.send(
      "{not json",
      '{"jsonrpc":"1.0","id":7,"method":"list_sessions"}',
      '{"jsonrpc":"2.0","id":8,"method":"rm_rf"}',
      '{"jsonrpc":"2.0","id":9,"method":"exec_command","params":{"cmd":"true","policy":"unsafe"}}',
      '{"jsonrpc":"2.0","id":10,"method":"write_stdin","params":{"session_id":"404"}}',
      "[1, 2]",
    );
    await cli.send(
      `{"jsonrpc":"2.0","id":12,"method":"exec_command","params":{"cmd":"${"y".repeat(10_000_000)}"}}`,
    );
    await cli.send(
      '{"jsonrpc":"2.0","id":13,"method":"exec_command","params":{"cmd":["echo","still serving"]}}',
    );
    await cli.waitForStdout("still serving");
    await cli.closeStdin();
    const { code, stdout } = await cli.result();
    assert.equal(code, 0);
    const all = messages(stdout);
    for (const message of all) JsonRpcResponseSchema.parse(message);
    const byId = (id: unknown) =>
      all.find((m) => m.id === id) as { error?: { code: number; data?: { code?: string } } };
    const errors = all.filter((m) => m.id === null).map((m) => (m as { error: { code: number } }).error.code);
    assert.deepEqual(errors.sort(), [-32700, -32600].sort()); // Bad JSON, a batch.
    assert.equal(byId(7).error?.code, -32600);
    assert.equal(byId(8).error?.code, -32601);
    assert.equal(byId(9).error?.code, -32602); // An agent cannot pass a policy.
    assert.equal(byId(10).error?.code, -32000);
    assert.equal(byId(10).error?.data?.code, "E_SESSION_UNKNOWN");
    // Over the cap: skipped unread (never run), answered with the id its first bytes show.
    assert.equal(byId(12).error?.code, -32600);
    assert.equal("result" in byId(12), false);
    const last = all.find((m) => m.id === 13) as { result: { output: string; exit_code: number } };
    assert.equal(last.result.output, "still serving\n");
    assert.equal(last.result.exit_code, 0);
  },
});

Deno.test({
  name: "agent rpc: two subscribers read one session in different views",
  ...sanitize,
  async fn() {
    const cli = new CliProcess(["agent", "--unsafe-no-sandbox", "--ack-no-network-enforcement"]);
    await cli.send({
      jsonrpc: "2.0",
      id: 1,
      method: "exec_command",
      params: { cmd: "printf '\\033[1;31mred\\033[0m\\n'; sleep 0.5; printf 'done\\n'", yield_time_ms: 250 },
    });
    await cli.waitForStdout('"id":1');
    await cli.send(
      { jsonrpc: "2.0", id: 2, method: "session.subscribe", params: { session_id: "1", token_mode: "raw" } },
      {
        jsonrpc: "2.0",
        id: 3,
        method: "session.subscribe",
        params: { session_id: "1", token_mode: "compact" },
      },
    );
    await cli.waitForStdout('"type":"exit"');
    await new Promise((resolve) => setTimeout(resolve, 300));
    await cli.closeStdin();
    const all = messages((await cli.result()).stdout);
    const subs = Object.fromEntries(
      [2, 3].map((
        id,
      ) => [id, (all.find((m) => m.id === id) as { result: { subscription: string } }).result.subscription]),
    );
    const frames = (sub: string) =>
      all.filter((m) =>
        m.method === "session.frame" && (m.params as { subscription: string }).subscription === sub
      )
        .map((m) => (m.params as { frame: Record<string, unknown> }).frame);
    const raw = frames(subs[2]!);
    const compact = frames(subs[3]!);
    assert.equal(raw[0]?.type, "start"); // From seq 0: the whole session.
    assert.ok(raw.some((f) => f.type === "stdout" && String(f.data).includes("\x1b[1;31mred")));
    assert.ok(raw.some((f) => f.type === "exit"));
    const text = compact.filter((f) => f.type === "text").map((f) => f.data).join("");
    assert.equal(text, "red\ndone\n");
    assert.ok(compact.some((f) => f.type === "exit"));
    // Each stream ends with session.end, after its last frame.
    for (const sub of [subs[2]!, subs[3]!]) {
      const mine = all.filter((m) =>
        (m.params as { subscription?: string } | undefined)?.subscription === sub
      );
      assert.equal(mine.at(-1)?.method, "session.end");
      assert.equal(mine.filter((m) => m.method === "session.end").length, 1);
    }
  },
});

Deno.test({
  name: "agent --schema prints the five tools for openai, anthropic and jsonschema",
  ...sanitize,
  async fn() {
    for (const flavour of ["openai", "anthropic", "jsonschema"]) {
      const { code, stdout } = await runCli(["agent", "--schema", flavour]);
      assert.equal(code, 0);
      const tools = JSON.parse(stdout) as Record<string, unknown>[];
      const names = tools.map((t) => (t.function as { name?: string } | undefined)?.name ?? t.name);
      assert.deepEqual(names, [
        "exec_command",
        "write_stdin",
        "read_output",
        "close_session",
        "list_sessions",
      ]);
    }
    const bad = await runCli(["agent", "--schema", "xml"]);
    assert.equal(bad.code, 2);
  },
});

Deno.test({
  name: "agent rpc: pagers and colour are tamed by default; the host's --env changes it, a call's env too",
  ...sanitize,
  async fn() {
    const cli = new CliProcess([
      "agent",
      "--unsafe-no-sandbox",
      "--ack-no-network-enforcement",
      "--env",
      "PAGER=less",
    ]);
    await cli.send(
      {
        jsonrpc: "2.0",
        id: 1,
        method: "exec_command",
        params: { cmd: 'echo "$PAGER $GIT_PAGER $NO_COLOR $TERM"' },
      },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "exec_command",
        params: { cmd: 'echo "$NO_COLOR"', env: { NO_COLOR: "" } },
      },
    );
    await cli.waitForStdout('"id":2');
    await cli.waitForStdout('"id":1');
    await cli.closeStdin();
    const all = messages((await cli.result()).stdout);
    const output = (id: number) =>
      (all.find((m) => m.id === id) as { result: { output: string } }).result.output;
    assert.equal(output(1), "less cat 1 xterm-256color\n");
    assert.equal(output(2), "\n");
  },
});

Deno.test({
  name: "agent rpc: session.start returns at once; a subscription's answer comes before its first frame",
  ...sanitize,
  async fn() {
    const cli = new CliProcess(["agent", "--unsafe-no-sandbox", "--ack-no-network-enforcement"]);
    await cli.send({
      jsonrpc: "2.0",
      id: 1,
      method: "session.start",
      params: { cmd: ["python3", "-c", "print('started')"] },
    });
    await cli.waitForStdout('"id":1');
    await cli.send({ jsonrpc: "2.0", id: 2, method: "session.subscribe", params: { session_id: "1" } });
    await cli.waitForStdout('"method":"session.end"');
    await cli.closeStdin();
    const all = messages((await cli.result()).stdout);
    assert.deepEqual(all[0], { jsonrpc: "2.0", id: 1, result: { session_id: "1" } });
    const answer = all.findIndex((m) => m.id === 2);
    const first = all.findIndex((m) => m.method === "session.frame");
    assert.ok(answer >= 0 && answer < first, "the answer, then the frames");
    const frames = all.filter((m) => m.method === "session.frame")
      .map((m) => (m.params as { frame: Record<string, unknown> }).frame);
    assert.equal(frames[0]?.type, "start");
    assert.ok(frames.some((f) => f.type === "stdout" && String(f.data).includes("started")));
    assert.equal(frames.at(-1)?.type, "exit");
  },
});
