/**
 * MCP's Streamable HTTP transport (revision 2025-11-25, also 2025-06-18 and 2025-03-26), as the daemon's
 * listener serves it at `/mcp` once it has checked Host, Origin and the control token:
 *
 * - `POST` with one JSON-RPC message; `Accept` must name `application/json` and `text/event-stream`
 *   (406), the body must be JSON (`Content-Type: application/json`, 415). A request is answered as
 *   `application/json`, except `tools/call`, answered as an SSE stream that carries its progress and log
 *   notifications, then its answer. Notifications and responses: 202 with no body.
 * - `initialize` opens an MCP session: its answer carries `Mcp-Session-Id` (24 random bytes, hex).
 *   Every other message must carry it: missing 400, unknown (ended, expired, never issued) 404.
 * - `MCP-Protocol-Version`, when sent, must be a revision the server speaks (400).
 * - `GET` is 405 (the server sends nothing a client did not ask for), `DELETE` ends the MCP session.
 *
 * The MCP sessions share the daemon's agent tools: the programs they ran outlive them, and an agent that
 * connects again (a new MCP session) finds them with `list_sessions`.
 *
 * @module
 */
import { toSpecterError } from "../errors.ts";
import { MCP_ERRORS, MCP_PROTOCOL_VERSIONS } from "../protocol/mod.ts";
import type { AgentTools } from "../agent/mod.ts";
import { idOf, McpServer, type McpServerOptions, rpcErrorMessage } from "./server.ts";

/** A request to `/mcp`, body read whole (the listener caps it). */
export interface McpHttpRequest {
  readonly method: string;
  readonly headers: Headers;
  readonly body: Uint8Array;
}

/** The answer: a whole body, or a stream (SSE) the listener writes as it comes, then closes. */
export interface McpHttpReply {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body?: string;
  readonly stream?: ReadableStream<Uint8Array>;
}

/** MCP sessions held at once; at the cap the least recently used idle one ends. */
export const MAX_MCP_SESSIONS = 64;
/** An MCP session unused for this long ends (ms). */
export const MCP_SESSION_IDLE_MS = 60 * 60_000;

interface Held {
  readonly server: McpServer;
  used: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** The `/mcp` endpoint. */
export class McpHttp {
  readonly #tools: () => Promise<AgentTools>;
  readonly #options: McpServerOptions;
  readonly #sessions = new Map<string, Held>();

  /** `tools`: the agent tools every MCP session shares (made with the first). */
  constructor(tools: () => Promise<AgentTools>, options: McpServerOptions = {}) {
    this.#tools = tools;
    this.#options = options;
  }

  /** MCP sessions open now. */
  get sessions(): number {
    return this.#sessions.size;
  }

  /** Answers one request. */
  async handle(request: McpHttpRequest): Promise<McpHttpReply> {
    this.#expire();
    const h = request.headers;
    if (request.method === "GET") {
      return reply(405, "Method not allowed: this server opens no stream of its own", {
        allow: "POST, DELETE",
      });
    }
    const version = h.get("mcp-protocol-version");
    if (version !== null && !(MCP_PROTOCOL_VERSIONS as readonly string[]).includes(version)) {
      return reply(400, `Unsupported MCP-Protocol-Version "${version.slice(0, 40)}"`);
    }
    const sessionId = h.get("mcp-session-id");
    if (request.method === "DELETE") {
      if (sessionId === null) return reply(400, "Missing Mcp-Session-Id");
      const held = this.#sessions.get(sessionId);
      if (held === undefined) return reply(404, "Unknown MCP session");
      held.server.close();
      this.#sessions.delete(sessionId);
      return { status: 200, headers: {}, body: "" };
    }
    if (request.method !== "POST") {
      return reply(405, `Method ${request.method.slice(0, 16)} is not served here`, {
        allow: "POST, DELETE",
      });
    }
    const accept = (h.get("accept") ?? "").toLowerCase();
    if (!accept.includes("application/json") || !accept.includes("text/event-stream")) {
      return reply(406, "Accept must name both application/json and text/event-stream");
    }
    if (!(h.get("content-type") ?? "").toLowerCase().startsWith("application/json")) {
      return reply(415, "Content-Type must be application/json");
    }
    let message: unknown;
    try {
      message = JSON.parse(decoder.decode(request.body));
    } catch {
      return jsonReply(400, rpcErrorMessage(null, MCP_ERRORS.PARSE_ERROR, "Parse error: not valid JSON"));
    }
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      return jsonReply(
        400,
        rpcErrorMessage(null, MCP_ERRORS.INVALID_REQUEST, "Invalid request: one JSON-RPC object"),
      );
    }
    const method = (message as { method?: unknown }).method;
    const isRequest = typeof method === "string" && idOf(message) !== null;
    if (method === "initialize" && isRequest) return await this.#open(message);
    if (sessionId === null) return reply(400, "Missing Mcp-Session-Id: send initialize first");
    const held = this.#sessions.get(sessionId);
    if (held === undefined) return reply(404, "Unknown MCP session: initialize again");
    held.used = Date.now();
    const headers = { "mcp-session-id": sessionId };
    if (!isRequest) {
      // A notification or a response: taken (an invalid one is answered nowhere, as on stdio).
      await held.server.handle(message, { send: () => {} });
      return { status: 202, headers, body: "" };
    }
    if (method === "tools/call") return this.#stream(held.server, message, headers);
    const answer = await collect(held.server, message);
    return answer === null ? { status: 202, headers, body: "" } : jsonReply(200, answer, headers);
  }

  /** Ends every MCP session (the daemon stops). */
  close(): void {
    for (const held of this.#sessions.values()) held.server.close();
    this.#sessions.clear();
  }

  async #open(message: object): Promise<McpHttpReply> {
    if (this.#sessions.size >= MAX_MCP_SESSIONS && !this.#evict()) {
      return reply(503, `The daemon holds ${MAX_MCP_SESSIONS} MCP sessions, all busy`);
    }
    let tools: AgentTools;
    try {
      tools = await this.#tools();
    } catch (error: unknown) {
      // The agent tools cannot start (their policy cannot be realised here): say so, open nothing.
      const failure = toSpecterError(error);
      return reply(503, `The agent tools cannot start: ${failure.code}: ${failure.message.slice(0, 300)}`);
    }
    const server = new McpServer(tools, this.#options);
    const answer = await collect(server, message);
    if (answer === null || "error" in answer) return jsonReply(200, answer ?? {});
    const id = Array.from(crypto.getRandomValues(new Uint8Array(24)), (b) => b.toString(16).padStart(2, "0"))
      .join("");
    this.#sessions.set(id, { server, used: Date.now() });
    return jsonReply(200, answer, { "mcp-session-id": id });
  }

  /** A call's answer as SSE: its notifications as they come, then the answer; the stream then ends. */
  #stream(server: McpServer, message: object, headers: Record<string, string>): McpHttpReply {
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let open = true;
    const stream = new ReadableStream<Uint8Array>({
      start: (c) => void (controller = c),
      cancel: () => void (open = false), // The client went away: the call runs on (not a cancel).
    });
    const send = (m: Record<string, unknown>) => {
      if (!open) return;
      try {
        controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(m)}\n\n`));
      } catch {
        open = false; // Closed under us.
      }
    };
    void server.handle(message, { send }).finally(() => {
      if (!open) return;
      open = false;
      try {
        controller.close();
      } catch {
        // Cancelled meanwhile.
      }
    });
    return {
      status: 200,
      headers: { ...headers, "content-type": "text/event-stream", "cache-control": "no-cache, no-store" },
      stream,
    };
  }

  /** Ends the least recently used MCP session with no call in flight; false when all are busy. */
  #evict(): boolean {
    let victim: [string, Held] | null = null;
    for (const entry of this.#sessions) {
      if (entry[1].server.busy === 0 && (victim === null || entry[1].used < victim[1].used)) victim = entry;
    }
    if (victim === null) return false;
    victim[1].server.close();
    this.#sessions.delete(victim[0]);
    return true;
  }

  #expire(): void {
    const now = Date.now();
    for (const [id, held] of this.#sessions) {
      if (held.server.busy === 0 && now - held.used > MCP_SESSION_IDLE_MS) {
        held.server.close();
        this.#sessions.delete(id);
      }
    }
  }
}

/** The one message a request is answered with (notifications it causes are dropped), or null. */
async function collect(server: McpServer, message: unknown): Promise<Record<string, unknown> | null> {
  let answer: Record<string, unknown> | null = null;
  await server.handle(message, { send: (m) => void ("id" in m ? (answer = m) : undefined) });
  return answer;
}

function jsonReply(
  status: number,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): McpHttpReply {
  return { status, headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) };
}

/** A refusal at the HTTP level: a JSON-RPC error body with id null (what the SDK's own server sends). */
function reply(status: number, message: string, headers: Record<string, string> = {}): McpHttpReply {
  return jsonReply(status, { jsonrpc: "2.0", id: null, error: { code: -32000, message } }, headers);
}
