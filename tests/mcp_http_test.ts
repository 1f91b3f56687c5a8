/**
 * The daemon's `/mcp` (MCP's Streamable HTTP) through the official client (`StreamableHTTPClientTransport`
 * with the control token as `Authorization: Bearer`) against a real daemon: a sandboxed command with
 * progress over SSE, tool errors, and an agent that connects again (a new MCP session) finding its session
 * with list_sessions; and the transport's refusals on the wire (no token, a viewer token, Accept, session
 * ids, protocol versions, GET, DELETE, an oversized body).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { withTempDir } from "./_helpers.ts";
import { type RemoteDaemon, withRemoteDaemon } from "./_remote.ts";

const sanitize = { sanitizeOps: false, sanitizeResources: false };

interface Structured {
  session_id?: string;
  output?: string;
  running?: boolean;
  exit_code?: number;
  error?: { code: string };
  sessions?: { session_id: string; running: boolean }[];
}

async function connect(
  daemon: RemoteDaemon,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${daemon.origin}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${daemon.info.control_token}` } },
  });
  const client = new Client({ name: "specter-http-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
};

Deno.test({
  name: "mcp http (SDK client): a command with progress over SSE, tool errors, a new MCP session finds " +
    "the sessions of the last one, a cancelled call's program gets ctrl-c",
  ...sanitize,
  async fn() {
    await withTempDir((dir) =>
      withRemoteDaemon(join(dir, "d"), [], async (daemon) => {
        const first = await connect(daemon);
        assert.equal(first.client.getServerVersion()?.name, "specter");
        assert.equal((await first.client.listTools()).tools.length, 5);
        const progress: number[] = [];
        const result = await first.client.callTool(
          { name: "exec_command", arguments: { cmd: "echo start-http; read -t 2.5 x; echo waited-http" } },
          undefined,
          { onprogress: (p: { progress: number }) => void progress.push(p.progress) },
        );
        assert.equal(result.isError, false);
        assert.match((result.structuredContent as Structured).output ?? "", /start-http[\s\S]*waited-http/);
        assert.ok(progress.length >= 1, "no progress notification over SSE");
        const bad = await first.client.callTool({
          name: "read_output",
          arguments: { session_id: "x", from_seq: 0 },
        });
        assert.equal(bad.isError, true);
        assert.equal((bad.structuredContent as Structured).error?.code, "E_SESSION_UNKNOWN");

        const running = await first.client.callTool({
          name: "exec_command",
          arguments: { cmd: "echo long-lived; read -t 60 x", yield_time_ms: 1000 },
        });
        const id = (running.structuredContent as Structured).session_id!;
        assert.equal((running.structuredContent as Structured).running, true);
        await first.transport.terminateSession(); // DELETE: the MCP session ends, the program does not.
        await first.client.close();

        const second = await connect(daemon);
        const listing = await second.client.callTool({ name: "list_sessions", arguments: {} });
        const found = (listing.structuredContent as Structured).sessions?.find((s) => s.session_id === id);
        assert.equal(found?.running, true, `session ${id} not found again: ${JSON.stringify(listing)}`);
        // A cancelled call (notifications/cancelled in a POST of its own) presses ctrl-c in its session.
        const before = new Set(
          (listing.structuredContent as Structured).sessions?.map((s) => s.session_id) ?? [],
        );
        const abort = new AbortController();
        await assert.rejects(second.client.callTool(
          {
            name: "exec_command",
            arguments: { cmd: "echo waiting-http; read -t 25 x", yield_time_ms: 20_000 },
          },
          undefined,
          { onprogress: () => abort.abort("test cancels"), signal: abort.signal },
        ));
        let interrupted: { session_id: string; running: boolean } | undefined;
        for (let i = 0; i < 100 && interrupted?.running !== false; i++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          const all = await second.client.callTool({ name: "list_sessions", arguments: {} });
          interrupted = (all.structuredContent as Structured).sessions?.find((s) =>
            !before.has(s.session_id)
          );
        }
        assert.equal(interrupted?.running, false, "the cancelled call's program still runs");
        const read = await second.client.callTool({
          name: "read_output",
          arguments: { session_id: interrupted!.session_id, from_seq: 0, token_mode: "raw" },
        });
        assert.match((read.structuredContent as Structured).output ?? "", /waiting-http[\s\S]*\^C/);
        const closed = await second.client.callTool({
          name: "close_session",
          arguments: { session_id: id, force: true },
        });
        assert.equal((closed.structuredContent as Structured).running, false);
        await second.transport.terminateSession();
        await second.client.close();
      })
    );
  },
});

Deno.test({
  name: "mcp http (wire): no token 401, a viewer token 403, a foreign Origin 403, Accept 406, session ids " +
    "400/404, an unsupported MCP-Protocol-Version 400, GET 405, DELETE ends the session, a body over 1 MiB 413, wrong tokens lock the address out",
  ...sanitize,
  async fn() {
    await withTempDir((dir) =>
      withRemoteDaemon(join(dir, "d"), [], async (daemon) => {
        const url = `${daemon.origin}/mcp`;
        const base = {
          authorization: `Bearer ${daemon.info.control_token}`,
          accept: "application/json, text/event-stream",
          "content-type": "application/json",
        };
        const post = async (headers: Record<string, string>, body: unknown = INIT) => {
          const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
          const text = await response.text();
          return { status: response.status, headers: response.headers, text };
        };
        const { authorization: _, ...anonymous } = base;
        assert.equal((await post(anonymous)).status, 401);
        assert.equal(
          (await post({ ...base, authorization: `Bearer ${daemon.info.viewer_token}` })).status,
          403,
        );
        assert.equal((await post({ ...base, origin: "http://evil.example" })).status, 403);
        assert.equal((await post({ ...base, accept: "application/json" })).status, 406);
        assert.equal((await post({ ...base, "mcp-protocol-version": "1999-01-01" })).status, 400);
        const opened = await post(base);
        assert.equal(opened.status, 200);
        const session = opened.headers.get("mcp-session-id")!;
        assert.match(session, /^[0-9a-f]{48}$/);
        assert.equal(JSON.parse(opened.text).result.protocolVersion, "2025-11-25");
        const ping = { jsonrpc: "2.0", id: 2, method: "ping" };
        assert.equal((await post(base, ping)).status, 400); // No session id.
        assert.equal((await post({ ...base, "mcp-session-id": "0".repeat(48) }, ping)).status, 404);
        const ok = await post(
          { ...base, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" },
          ping,
        );
        assert.deepEqual([ok.status, JSON.parse(ok.text).result], [200, {}]);
        const note = { jsonrpc: "2.0", method: "notifications/initialized" };
        assert.equal((await post({ ...base, "mcp-session-id": session }, note)).status, 202);
        const get = await fetch(url, { headers: { ...base, "mcp-session-id": session } });
        await get.body?.cancel();
        assert.equal(get.status, 405);
        const big = await post({ ...base, "mcp-session-id": session }, {
          ...ping,
          params: { x: "y".repeat(1_100_000) },
        });
        assert.equal(big.status, 413);
        const deleted = await fetch(url, {
          method: "DELETE",
          headers: { ...base, "mcp-session-id": session },
        });
        await deleted.body?.cancel();
        assert.equal(deleted.status, 200);
        assert.equal((await post({ ...base, "mcp-session-id": session }, ping)).status, 404);
        // Wrong tokens are failed attempts: the address is locked out (429), even with the right token.
        const statuses = [];
        for (let i = 0; i < 7; i++) {
          statuses.push((await post({ ...base, authorization: "Bearer wrong" })).status);
        }
        assert.equal(statuses[0], 401);
        assert.equal(statuses.at(-1), 429, statuses.join(" "));
        assert.equal((await post(base)).status, 429);
      })
    );
  },
});
