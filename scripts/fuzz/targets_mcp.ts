/**
 * Fuzz targets of the MCP server (`specter mcp`, the daemon's `/mcp`), what an MCP client sends:
 *
 * - `mcp_message`: lines of JSON-RPC fed to one `McpServer` (the transport-free core) over stand-in agent
 *   tools that answer at once (a result, or a typed error). Oracle: the server never throws; every message
 *   it sends is JSON-RPC 2.0; every request with a usable id is answered exactly once, a notification or a
 *   response never; error codes are only -32700…-32602 (never -32603, an unexpected failure); only `ping`
 *   and `initialize` are served before `initialize`; a tool result is `isError: false` with a result that
 *   matches its output schema, or `isError: true` with a stable code of the error table.
 * - `mcp_http`: requests (method, headers, body) to `McpHttp`, the Streamable HTTP layer, in sequence on
 *   one endpoint. Oracle: only the documented statuses; a JSON body is JSON-RPC; a session id is issued
 *   only by an `initialize` that succeeded, and only a session id it issued is taken.
 *
 * @module
 */
import { ERROR_CODES, SessionError } from "../../src/errors.ts";
import type { AgentTools } from "../../src/agent/mod.ts";
import { McpHttp, McpServer, SessionListSchema } from "../../src/mcp/mod.ts";
import { ToolResultSchema } from "../../src/protocol/mod.ts";
import type { ToolResult } from "../../src/protocol/mod.ts";
import { Crash, type FuzzTarget, generateJsonish } from "./_common.ts";
import type { Prng } from "./_prng.ts";

const rpc = (method: string, params?: unknown, id: unknown = 1) => ({
  jsonrpc: "2.0",
  ...(id === undefined ? {} : { id }),
  method,
  ...(params === undefined ? {} : { params }),
});
const INIT = rpc("initialize", {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "fuzz", version: "1" },
}, 0);
const CORPUS: readonly unknown[] = [
  INIT,
  rpc("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: { roots: {} },
    clientInfo: { name: "c", version: "2" },
  }, "i"),
  rpc("notifications/initialized", undefined, undefined),
  rpc("ping", undefined, 2),
  rpc("ping", {}, "p"),
  rpc("tools/list", {}, 3),
  rpc("tools/list", { cursor: "x" }, 4),
  rpc("tools/call", { name: "exec_command", arguments: { cmd: "echo hi" } }, 5),
  rpc("tools/call", {
    name: "exec_command",
    arguments: { cmd: ["ls", "-la"], tty: false, yield_time_ms: 1000 },
  }, 6),
  rpc("tools/call", { name: "exec_command", arguments: { cmd: "fail" }, _meta: { progressToken: "t" } }, 7),
  rpc("tools/call", { name: "write_stdin", arguments: { session_id: "1", chars: "q", keys: ["ctrl-c"] } }, 8),
  rpc("tools/call", { name: "write_stdin", arguments: { session_id: 404 } }, 9),
  rpc("tools/call", { name: "read_output", arguments: { session_id: "1", from_seq: 0, to_seq: 9 } }, 10),
  rpc("tools/call", { name: "close_session", arguments: { session_id: "1", force: true } }, 11),
  rpc("tools/call", { name: "list_sessions", arguments: {} }, 12),
  rpc("tools/call", { name: "rm_rf" }, 13),
  rpc("logging/setLevel", { level: "debug" }, 14),
  rpc("logging/setLevel", { level: "loud" }, 15),
  rpc("notifications/cancelled", { requestId: 5, reason: "x" }, undefined),
  rpc("server/discover", {}, 16),
  rpc("resources/list", {}, 17),
  { jsonrpc: "2.0", id: 5, result: {} },
  { jsonrpc: "2.0", id: 6, error: { code: -1, message: "x" } },
];
const TEXTS = CORPUS.map((v) => JSON.stringify(v));
const TOKENS = [
  '"jsonrpc":"2.0"',
  '"method":"tools/call"',
  '"method":"initialize"',
  '"id":null',
  '"id":1.5',
  '"params":[]',
  '"_meta":{"progressToken":{}}',
  '"arguments":null',
  '"__proto__":',
  '"constructor":',
  "\\u0000",
  "[",
  "{",
  "}",
  "1e999",
];

/** Agent tools that answer at once: a result built from the arguments, or a typed error. */
function standInTools(): AgentTools {
  const result = (output: string): ToolResult => ({
    session_id: "1",
    output,
    running: false,
    exit_code: 0,
    timed_out: false,
    wall_time_ms: 1,
    truncated: false,
    original_token_count: 1,
    token_mode: "compact",
    returned_on: "exit",
    screen: "normal",
    from_seq: 0,
    to_seq: 2,
  });
  const sessionOf = (id: unknown) => {
    if (String(id) !== "1") throw new SessionError("E_SESSION_UNKNOWN", `No session "${String(id)}"`);
  };
  const tools = {
    execCommand: (p: { cmd: unknown }) => {
      if (p.cmd === "fail") return Promise.reject(new SessionError("E_SESSION_CLOSED", "stand-in failure"));
      return Promise.resolve(result(JSON.stringify(p.cmd)));
    },
    writeStdin: (p: { session_id: unknown }) => (sessionOf(p.session_id), Promise.resolve(result(""))),
    readOutput: (p: { session_id: unknown }) => (sessionOf(p.session_id), Promise.resolve(result("x"))),
    closeSession: (p: { session_id: unknown }) => (sessionOf(p.session_id), Promise.resolve(result("y"))),
    listSessions: () => ({ sessions: [] }),
    cancelWaits: () => {},
    close: () => Promise.resolve(),
  };
  return tools as unknown as AgentTools;
}

const KNOWN_RPC_ERRORS = new Set([-32700, -32600, -32601, -32602]);

/** `http`: a refusal of the HTTP layer (-32000, with id null) is documented too. */
function checkMessage(m: Record<string, unknown>, http = false): void {
  if (m.jsonrpc !== "2.0") throw new Crash(`Not JSON-RPC 2.0: ${JSON.stringify(m).slice(0, 200)}`);
  JSON.parse(JSON.stringify(m)); // Serialisable.
  const error = m.error as { code?: unknown } | undefined;
  const refusal = http && error?.code === -32000 && m.id === null;
  if (error !== undefined && !KNOWN_RPC_ERRORS.has(error.code as number) && !refusal) {
    throw new Crash(`Undocumented error code ${String(error.code)}: ${JSON.stringify(m).slice(0, 300)}`);
  }
  const result = m.result as
    | { content?: unknown; isError?: unknown; structuredContent?: unknown }
    | undefined;
  if (result?.content !== undefined) {
    const structured = result.structuredContent as Record<string, unknown>;
    if (result.isError === true) {
      const code = (structured.error as { code?: string }).code ?? "";
      if (!Object.hasOwn(ERROR_CODES, code)) throw new Crash(`Tool error code "${code}" is not in the table`);
    } else if (
      !ToolResultSchema.safeParse(structured).success && !SessionListSchema.safeParse(structured).success
    ) {
      throw new Crash(
        `structuredContent matches no output schema: ${JSON.stringify(structured).slice(0, 300)}`,
      );
    }
  }
}

const mcpMessage: FuzzTarget = {
  name: "mcp_message",
  about: "JSON-RPC lines to the MCP core (McpServer) over stand-in agent tools",
  generate(rng) {
    const lines: string[] = rng.chance(0.7) ? [JSON.stringify(INIT)] : [];
    for (let n = 1 + rng.below(5); n > 0; n--) lines.push(generateJsonish(rng, CORPUS, TEXTS, TOKENS));
    return lines.join("\n");
  },
  async run(input) {
    const server = new McpServer(standInTools(), { progressMs: 1e9 });
    let initialized = false;
    for (const line of input.split("\n")) {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        continue; // The transport answers a line that is not JSON (-32700); the core never sees it.
      }
      const sent: Record<string, unknown>[] = [];
      await server.handle(value, { send: (m) => void sent.push(m) });
      for (const m of sent) checkMessage(m);
      const v = value as { id?: unknown; method?: unknown; result?: unknown; error?: unknown } | null;
      const responses = sent.filter((m) => "id" in m);
      const isObject = typeof v === "object" && v !== null && !Array.isArray(v);
      // A valid notification: an invalid message without an id is answered with id null (JSON-RPC 2.0).
      const params = isObject ? (v as { params?: unknown }).params : undefined;
      const isNotification = isObject && (v as { jsonrpc?: unknown }).jsonrpc === "2.0" &&
        typeof v.method === "string" && v.id === undefined && !("result" in v) && !("error" in v) &&
        (params === undefined || (typeof params === "object" && params !== null && !Array.isArray(params)));
      const id = isObject ? v.id : undefined;
      const usableId = typeof id === "string" || typeof id === "number";
      if (isNotification && responses.length > 0) throw new Crash("A notification was answered");
      if (isObject && typeof v.method === "string" && usableId && responses.length !== 1) {
        // A request with a params that is not an object is an invalid message: answered once too.
        throw new Crash(`A request got ${responses.length} answers`);
      }
      if (responses.length > 1) throw new Crash("More than one answer to one message");
      const answer = responses[0];
      if (answer !== undefined && "result" in answer) {
        if (v?.method === "initialize") initialized = true;
        else if (!initialized && v?.method !== "ping") {
          throw new Crash(`"${String(v?.method)}" was served before initialize`);
        }
      }
    }
    server.close();
  },
};

// --- mcp_http ----------------------------------------------------------------------------------------

const METHODS = ["POST", "POST", "POST", "GET", "DELETE", "PUT", "OPTIONS"];
const ACCEPTS = ["application/json, text/event-stream", "application/json", "text/event-stream", "*/*", ""];
const TYPES = ["application/json", "application/json; charset=utf-8", "text/plain", ""];
const VERSIONS = ["", "2025-11-25", "2025-06-18", "2025-03-26", "1999-01-01", "2025-11-25x"];
const STATUSES = new Set([200, 202, 400, 404, 405, 406, 415, 503]);

function httpCase(rng: Prng): Record<string, unknown> {
  return {
    method: rng.pick(METHODS),
    accept: rng.pick(ACCEPTS),
    type: rng.pick(TYPES),
    version: rng.pick(VERSIONS),
    // -1: no session id; 0: the last one issued; 1: a made-up one.
    session: rng.below(3) - 1,
    body: generateJsonish(rng, CORPUS, TEXTS, TOKENS),
  };
}

const mcpHttp: FuzzTarget = {
  name: "mcp_http",
  about: "requests (method, headers, body) to the Streamable HTTP layer (McpHttp), in sequence",
  generate(rng) {
    const cases = [];
    for (let n = 1 + rng.below(4); n > 0; n--) cases.push(httpCase(rng));
    return JSON.stringify(cases);
  },
  async run(input) {
    const endpoint = new McpHttp(() => Promise.resolve(standInTools()), { progressMs: 1e9 });
    const issued: string[] = [];
    const opening = {
      method: "POST",
      accept: ACCEPTS[0],
      type: "application/json",
      version: "",
      session: -1,
    };
    for (const c of [{ ...opening, body: JSON.stringify(INIT) }, ...JSON.parse(input)]) {
      const headers = new Headers();
      if (c.accept !== "") headers.set("accept", c.accept);
      if (c.type !== "") headers.set("content-type", c.type);
      if (c.version !== "") headers.set("mcp-protocol-version", c.version);
      const session = c.session === 0 ? issued.at(-1) : c.session === 1 ? "f".repeat(48) : undefined;
      if (session !== undefined) headers.set("mcp-session-id", session);
      const reply = await endpoint.handle({
        method: c.method,
        headers,
        body: new TextEncoder().encode(c.body),
      });
      if (!STATUSES.has(reply.status)) throw new Crash(`Status ${reply.status}`);
      if (reply.body !== undefined && reply.body !== "") checkMessage(JSON.parse(reply.body), true);
      if (reply.stream !== undefined) {
        const text = await new Response(reply.stream).text();
        for (const event of text.split("\n\n").filter((e) => e !== "")) {
          if (!event.startsWith("event: message\ndata: ")) {
            throw new Crash(`SSE event ${JSON.stringify(event)}`);
          }
          checkMessage(JSON.parse(event.slice("event: message\ndata: ".length)));
        }
      }
      const id = reply.headers["mcp-session-id"];
      if (id !== undefined && session === undefined) {
        const answer = JSON.parse(reply.body ?? "{}");
        if (!/^[0-9a-f]{48}$/.test(id) || answer.result?.protocolVersion === undefined) {
          throw new Crash(`Session id ${JSON.stringify(id)} issued without a successful initialize`);
        }
        issued.push(id);
      }
      let initialize = false;
      try {
        initialize = (JSON.parse(c.body) as { method?: unknown } | null)?.method === "initialize";
      } catch {
        // Not JSON: refused before any session is looked at.
      }
      if (session === "f".repeat(48) && reply.status < 300 && !initialize) {
        throw new Crash("A session id never issued was taken");
      }
    }
    endpoint.close();
  },
};

/** The MCP targets. */
export const MCP_TARGETS: readonly FuzzTarget[] = [mcpMessage, mcpHttp];
