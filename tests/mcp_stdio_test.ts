/**
 * `specter mcp` through the official MCP client (`@modelcontextprotocol/sdk`'s `Client` over
 * `StdioClientTransport`, which launches `deno run -A main.ts mcp`): the handshake, the tools and their
 * schemas, a real command in the sandbox with progress notifications, ping while a call runs, a cancelled
 * call whose program gets ctrl-c, log messages at the level set, tool errors as `isError` results; and
 * the raw wire: unknown methods before initialize, version negotiation, stdout holding only MCP messages,
 * and the exit when stdin ends.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { CliProcess, DENO, ROOT } from "./_helpers.ts";

const sanitize = { sanitizeOps: false, sanitizeResources: false };
/** The policy tests run commands under: `sleep` and `bash` are in it (the bwrap sandbox, no network). */
const POLICY = ["--policy", "basic"];

interface Structured {
  session_id?: string;
  output?: string;
  running?: boolean;
  exit_code?: number;
  error?: { code: string; message: string };
  sessions?: { session_id: string; running: boolean; exit_code: number | null }[];
}

async function connect(): Promise<{ client: Client; transport: StdioClientTransport; stderr: string[] }> {
  const transport = new StdioClientTransport({
    command: DENO,
    args: ["run", "--quiet", "-A", `${ROOT}/main.ts`, "mcp", ...POLICY],
    cwd: ROOT,
    env: { ...Deno.env.toObject(), NO_COLOR: "1" },
    stderr: "pipe",
  });
  const stderr: string[] = [];
  transport.stderr?.on("data", (chunk: Uint8Array) => stderr.push(new TextDecoder().decode(chunk)));
  const client = new Client({ name: "specter-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport, stderr };
}

function text(result: object): string {
  return (((result as { content?: unknown }).content ?? []) as { type: string; text?: string }[]).map((c) =>
    c.text ?? ""
  ).join("");
}

Deno.test({
  name: "mcp stdio (SDK client): initialize, tools with schemas, a sandboxed command with progress, ping " +
    "during the call, log messages, tool errors, an unknown tool",
  ...sanitize,
  async fn() {
    const { client, transport, stderr } = await connect();
    try {
      assert.equal(client.getServerVersion()?.name, "specter");
      const capabilities = client.getServerCapabilities();
      assert.ok(capabilities?.tools !== undefined && capabilities.logging !== undefined);
      assert.equal(capabilities.resources, undefined);
      assert.match(client.getInstructions() ?? "", /exec_command/);

      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), [
        "close_session",
        "exec_command",
        "list_sessions",
        "read_output",
        "write_stdin",
      ]);
      for (const tool of tools) {
        assert.match(tool.name, /^[A-Za-z0-9_]{1,64}$/);
        assert.equal(tool.inputSchema.type, "object");
        assert.equal(tool.outputSchema?.type, "object");
        assert.equal("$schema" in tool.inputSchema, false);
        assert.ok(tool.description !== undefined && tool.annotations !== undefined);
      }
      const exec = tools.find((t) => t.name === "exec_command")!;
      assert.ok("cmd" in (exec.inputSchema.properties ?? {}));
      assert.equal(exec.annotations?.readOnlyHint, false);

      const messages: { level: string; data: unknown }[] = [];
      client.setNotificationHandler(
        LoggingMessageNotificationSchema,
        (n: { params: { level: string; data: unknown } }) => void messages.push(n.params),
      );
      await client.setLoggingLevel("info");

      const progress: { progress: number; message?: string }[] = [];
      let finished = false;
      const call = client.callTool(
        { name: "exec_command", arguments: { cmd: "echo hello-mcp; sleep 2.5; echo done-mcp" } },
        undefined,
        { onprogress: (p) => void progress.push(p) },
      ).finally(() => finished = true);
      // A ping is answered while the call still runs (the read loop never waits on a program).
      await new Promise((resolve) => setTimeout(resolve, 500));
      await client.ping();
      assert.equal(finished, false, "the ping was answered only after the call");
      const result = await call;
      assert.equal(result.isError, false);
      const structured = result.structuredContent as Structured;
      assert.equal(structured.exit_code, 0);
      assert.equal(structured.running, false);
      assert.match(structured.output ?? "", /hello-mcp\n[\s\S]*done-mcp/);
      assert.match(text(result), /hello-mcp[\s\S]*done-mcp[\s\S]*\[session \S+ exited with code 0/);
      assert.ok(progress.length >= 1, "no progress notification");
      for (let i = 1; i < progress.length; i++) assert.ok(progress[i]!.progress > progress[i - 1]!.progress);
      assert.match(progress[0]!.message ?? "", /frames of output/);
      // Info: the session's exit; debug (below the level): not sent.
      assert.ok(messages.some((m) => m.level === "info"), JSON.stringify(messages));
      assert.ok(messages.every((m) => m.level !== "debug"));

      const bad = await client.callTool({ name: "write_stdin", arguments: { session_id: "no-such" } });
      assert.equal(bad.isError, true);
      assert.equal((bad.structuredContent as Structured).error?.code, "E_SESSION_UNKNOWN");
      assert.match(text(bad), /^E_SESSION_UNKNOWN: /);
      const invalid = await client.callTool({ name: "exec_command", arguments: { cmd: 5 } });
      assert.equal(invalid.isError, true);
      assert.equal((invalid.structuredContent as Structured).error?.code, "E_USAGE");
      assert.match(text(invalid), /cmd: expected a command line \(a non-empty string\) or an argv array/);
      // An unknown key name is E_USAGE like any other argument, and nothing is typed.
      const cat = await client.callTool({
        name: "exec_command",
        arguments: { cmd: ["cat"], yield_time_ms: 300 },
      });
      const catId = (cat.structuredContent as Structured).session_id!;
      const key = await client.callTool({
        name: "write_stdin",
        arguments: { session_id: catId, chars: "typed", keys: ["not-a-key"] },
      });
      assert.equal(key.isError, true);
      assert.equal((key.structuredContent as Structured).error?.code, "E_USAGE", text(key));
      assert.match(text(key), /write_stdin "keys": Unknown key "not-a-key"/);
      const after = await client.callTool({
        name: "write_stdin",
        arguments: { session_id: catId, yield_time_ms: 300 },
      });
      assert.doesNotMatch(text(after), /typed/, "nothing was typed");
      await client.callTool({ name: "close_session", arguments: { session_id: catId } });
      // A NUL would end the C string there: the program run would not be the one asked for (and logged).
      for (
        const args of [
          { cmd: "echo a; echo SAFE\u0000; echo INJECTED" },
          { cmd: ["/bin/echo", "a\u0000b"] },
          { cmd: "env", env: { FOO: "x\u0000y" } },
        ]
      ) {
        const nul = await client.callTool({ name: "exec_command", arguments: args });
        assert.equal(nul.isError, true, JSON.stringify(args));
        assert.equal((nul.structuredContent as Structured).error?.code, "E_USAGE");
        assert.match(text(nul), /NUL character/);
      }
      await assert.rejects(client.callTool({ name: "rm_rf", arguments: {} }), /-32602|Unknown tool/);
      await assert.rejects(client.setLoggingLevel("loud" as "info"), /-32602|Invalid/);
    } catch (error) {
      console.error(stderr.join(""));
      throw error;
    } finally {
      await transport.close();
    }
  },
});

Deno.test({
  name: "mcp stdio (SDK client): a cancelled call's program gets ctrl-c, its answer is never sent, and an " +
    "uncancelled twin runs on",
  ...sanitize,
  async fn() {
    const { client, transport, stderr } = await connect();
    const errors: Error[] = [];
    client.onerror = (error) => void errors.push(error);
    try {
      // A control: the same program, not cancelled, still runs at the end.
      const control = await client.callTool({
        name: "exec_command",
        arguments: { cmd: "echo armed; sleep 30", yield_time_ms: 1000 },
      });
      const controlId = (control.structuredContent as Structured).session_id!;
      assert.equal((control.structuredContent as Structured).running, true);
      const abort = new AbortController();
      const call = client.callTool(
        { name: "exec_command", arguments: { cmd: "echo armed; sleep 30", yield_time_ms: 25_000 } },
        undefined,
        // Progress comes every second; the call is cancelled at the first that counts output past the
        // start frame ("armed": under load the sandbox may take longer than a second to start). The SDK
        // sends notifications/cancelled for an aborted request.
        {
          onprogress: (progress) => {
            const frames = Number(/(\d+) frames of output/.exec(progress.message ?? "")?.[1] ?? 0);
            if (frames >= 1) abort.abort("test cancels");
          },
          signal: abort.signal,
        },
      );
      await assert.rejects(call);
      let sessions: Structured["sessions"] = [];
      for (let i = 0; i < 100; i++) {
        const listing = await client.callTool({ name: "list_sessions", arguments: {} });
        sessions = (listing.structuredContent as Structured).sessions ?? [];
        if (sessions.length === 2 && sessions.some((s) => !s.running)) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const cancelled = sessions.find((s) => s.session_id !== controlId);
      assert.equal(cancelled?.running, false, "the program still runs after the cancel");
      assert.equal(sessions.find((s) => s.session_id === controlId)?.running, true);
      const read = await client.callTool({
        name: "read_output",
        arguments: { session_id: cancelled!.session_id, from_seq: 0, token_mode: "raw" },
      });
      // The terminal took a ctrl-c (it echoes ^C) and the program died of SIGINT: not a kill.
      const structured = read.structuredContent as Structured & { signal?: string };
      assert.match(structured.output ?? "", /armed[\s\S]*\^C/);
      assert.equal(structured.signal, "INT");
      // The cancelled request was never answered (a late answer is an "unknown message ID" error).
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(errors.map((e) => e.message), []);
    } catch (error) {
      console.error(stderr.join(""));
      throw error;
    } finally {
      await transport.close();
    }
  },
});

Deno.test({
  name: "mcp stdio (wire): an unknown method before initialize is -32601 at once, tools/list before it " +
    "-32600, versions are echoed or answered with the latest, a line over 1 MiB is -32600 with its id, " +
    "stdout holds only MCP messages, EOF exits 0",
  ...sanitize,
  async fn() {
    const cli = new CliProcess(["mcp", ...POLICY]);
    const init = (id: number, version: string) => ({
      jsonrpc: "2.0",
      id,
      method: "initialize",
      params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "raw", version: "0" } },
    });
    await cli.send(
      { jsonrpc: "2.0", id: 1, method: "server/discover", params: {} },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      "{not json",
      init(3, "2025-06-18"),
    );
    await cli.waitForStdout('"id":3');
    await cli.send(init(4, "2025-06-18"), { jsonrpc: "2.0", method: "notifications/initialized" }, {
      jsonrpc: "2.0",
      id: 5,
      method: "tools/list",
    });
    await cli.waitForStdout('"id":5');
    // A line over 1 MiB, its id last (as the MCP SDK writes it): answered with that id, not null.
    await cli.send({
      method: "tools/call",
      params: { name: "exec_command", arguments: { cmd: `echo ${"y".repeat(1_200_000)}` } },
      jsonrpc: "2.0",
      id: 999,
    });
    await cli.waitForStdout('"id":999');
    await cli.closeStdin();
    const { code, stdout } = await cli.result();
    assert.equal(code, 0);
    const lines = new TextDecoder().decode(stdout).split("\n").filter((l) => l !== "");
    const all = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const m of all) assert.equal(m.jsonrpc, "2.0");
    const byId = (id: unknown) => all.find((m) => m.id === id) as Record<string, { code?: number }>;
    assert.equal(byId(1).error?.code, -32601);
    assert.equal(byId(2).error?.code, -32600);
    assert.equal(
      all.find((m) => m.id === null && (m.error as { code: number }).code === -32700) !== undefined,
      true,
    );
    assert.equal((byId(3).result as unknown as { protocolVersion: string }).protocolVersion, "2025-06-18");
    assert.equal(byId(4).error?.code, -32600); // Initialized already.
    assert.equal((byId(5).result as unknown as { tools: unknown[] }).tools.length, 5);
    assert.equal(byId(999).error?.code, -32600);

    const other = new CliProcess(["mcp", ...POLICY]);
    await other.send(init(1, "1999-01-01"));
    await other.waitForStdout('"id":1');
    await other.closeStdin();
    const second = await other.result();
    assert.equal(second.code, 0);
    const answer = JSON.parse(new TextDecoder().decode(second.stdout).trim());
    assert.equal(answer.result.protocolVersion, "2025-11-25");
  },
});
