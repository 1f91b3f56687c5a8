import assert from "node:assert/strict";
import { SessionError } from "../errors.ts";
import type { AgentSession, AgentTools, CallWatch } from "../agent/mod.ts";
import type { ToolResult } from "../protocol/mod.ts";
import { McpServer } from "./server.ts";

const RESULT: ToolResult = {
  session_id: "1",
  output: "hi\n",
  running: false,
  exit_code: 0,
  timed_out: false,
  wall_time_ms: 3,
  truncated: false,
  original_token_count: 1,
  token_mode: "compact",
  returned_on: "exit",
  screen: "normal",
  from_seq: 0,
  to_seq: 2,
};

/** Tools whose exec_command waits until its watch is aborted (or `release` is called). */
function slowTools(): { tools: AgentTools; aborted: () => boolean; release: () => void } {
  let aborted = false;
  let release = () => {};
  const tools = {
    execCommand: (_: unknown, watch?: CallWatch) =>
      new Promise<ToolResult>((resolve) => {
        watch?.session?.({ id: "1", lastSeq: 4, exit: null } as unknown as AgentSession);
        release = () => resolve(RESULT);
        watch?.signal?.addEventListener("abort", () => {
          aborted = true;
          resolve(RESULT);
        });
      }),
    writeStdin: () => Promise.reject(new SessionError("E_SESSION_UNKNOWN", 'No session "9"')),
    listSessions: () => ({ sessions: [] }),
  };
  return { tools: tools as unknown as AgentTools, aborted: () => aborted, release: () => release() };
}

const init = (version: string, id = 0) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "t", version: "0" } },
});

async function ask(server: McpServer, message: unknown): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  await server.handle(message, { send: (m) => void out.push(m) });
  return out;
}

Deno.test("mcp server: versions are echoed when spoken, else the latest; only ping before initialize", async () => {
  const server = new McpServer(slowTools().tools);
  assert.equal(
    ((await ask(server, { jsonrpc: "2.0", id: 1, method: "tools/list" }))[0]!.error as { code: number }).code,
    -32600,
  );
  assert.deepEqual((await ask(server, { jsonrpc: "2.0", id: 2, method: "ping" }))[0]!.result, {});
  assert.equal(
    ((await ask(server, { jsonrpc: "2.0", id: 3, method: "server/discover" }))[0]!.error as { code: number })
      .code,
    -32601,
  );
  const answer = (await ask(server, init("2025-03-26")))[0]!.result as { protocolVersion: string };
  assert.equal(answer.protocolVersion, "2025-03-26");
  const other = new McpServer(slowTools().tools);
  assert.equal(
    ((await ask(other, init("2030-01-01")))[0]!.result as { protocolVersion: string }).protocolVersion,
    "2025-11-25",
  );
  assert.deepEqual(await ask(other, { jsonrpc: "2.0", method: "notifications/initialized" }), []);
});

Deno.test("mcp server: a cancelled call aborts its watch and is never answered; progress rises while it runs", async () => {
  const { tools, aborted } = slowTools();
  const server = new McpServer(tools, { progressMs: 20 });
  await ask(server, init("2025-11-25"));
  const out: Record<string, unknown>[] = [];
  const call = server.handle({
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: { name: "exec_command", arguments: { cmd: "sleep 9" }, _meta: { progressToken: "p" } },
  }, { send: (m) => void out.push(m) });
  await new Promise((resolve) => setTimeout(resolve, 120));
  assert.equal(server.busy, 1);
  await ask(server, { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7 } });
  await call;
  assert.equal(aborted(), true);
  assert.equal(out.some((m) => m.id === 7), false, "the cancelled call was answered");
  const progress = out.map((m) => (m.params as { progress: number }).progress);
  assert.ok(progress.length >= 2, JSON.stringify(out));
  for (let i = 1; i < progress.length; i++) assert.ok(progress[i]! > progress[i - 1]!);
  assert.match((out[0]!.params as { message: string }).message, /session 1: 4 frames/);
});

Deno.test("mcp server: tool errors are isError results with their code; log messages from the level set", async () => {
  const { tools, release } = slowTools();
  const server = new McpServer(tools);
  await ask(server, init("2025-11-25"));
  assert.equal(
    ((await ask(server, { jsonrpc: "2.0", id: 1, method: "logging/setLevel", params: { level: "x" } }))[0]!
      .error as { code: number }).code,
    -32602,
  );
  await ask(server, { jsonrpc: "2.0", id: 2, method: "logging/setLevel", params: { level: "warning" } });
  const out = await ask(server, {
    jsonrpc: "2.0",
    id: 3,
    method: "tools/call",
    params: { name: "write_stdin", arguments: { session_id: "9" } },
  });
  const [log, answer] = out;
  assert.equal((log!.params as { level: string }).level, "warning");
  const result = answer!.result as { isError: boolean; structuredContent: { error: { code: string } } };
  assert.equal(result.isError, true);
  assert.equal(result.structuredContent.error.code, "E_SESSION_UNKNOWN");
  // Only the answer: nothing at warning or above happened.
  const call = ask(server, {
    jsonrpc: "2.0",
    id: 4,
    method: "tools/call",
    params: { name: "exec_command", arguments: { cmd: "x" } },
  });
  release();
  const done = await call;
  assert.deepEqual(done.map((m) => m.id), [4]);
  assert.equal(
    ((await ask(server, { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "nope" } }))[0]!
      .error as { code: number }).code,
    -32602,
  );
});
