/**
 * The transport-independent MCP server: one client's MCP session (a stdio process, or one `Mcp-Session-Id`
 * of the daemon's `/mcp`) over a set of agent tools. A message goes in; the answer to a request, and the
 * notifications it causes (progress, log messages), go to the output the request came with, so that
 * Streamable HTTP can send them on that request's own stream.
 *
 * - Lifecycle: `initialize` first (revisions 2025-11-25, 2025-06-18, 2025-03-26: a requested one is echoed,
 *   any other is answered with the latest); before it only `ping` is served. An unknown method is -32601
 *   at any time (a 2026 client probing with `server/discover` falls back at once).
 * - `tools/list`, `tools/call` (tool failures are `isError: true` results, see `tools.ts`; an unknown tool
 *   is -32602), `logging/setLevel`, `ping`.
 * - `notifications/progress` while a call runs, when its request carried `_meta.progressToken`: at most one
 *   per `progressMs`, `progress` the elapsed milliseconds (always increasing), the message the frames
 *   of output so far.
 * - `notifications/cancelled` for a call in flight: the program gets ctrl-c, the call's wait ends and its
 *   answer is never sent (the spec's rule: the receiver does not respond).
 *
 * @module
 */
import { SpecterError, toSpecterError, UsageError } from "../errors.ts";
import {
  CloseSessionParamsSchema,
  ExecCommandParamsSchema,
  ListSessionsParamsSchema,
  MCP_ERRORS,
  MCP_LATEST_VERSION,
  MCP_LOG_LEVELS,
  MCP_PROTOCOL_VERSIONS,
  McpCallToolParamsSchema,
  McpCancelledParamsSchema,
  McpInitializeParamsSchema,
  McpListToolsParamsSchema,
  type McpLogLevel,
  type McpProtocolVersion,
  McpRequestSchema,
  McpResponseSchema,
  McpSetLevelParamsSchema,
  ReadOutputParamsSchema,
  WriteStdinParamsSchema,
} from "../protocol/mod.ts";
import { VERSION } from "../version.ts";
import type { z } from "zod";
import type { AgentSession, AgentTools, CallWatch } from "../agent/mod.ts";
import {
  errorContent,
  listingContent,
  MCP_TOOL_NAMES,
  type McpCallResult,
  type McpToolName,
  mcpTools,
  toolResultContent,
} from "./tools.ts";

/** Where the messages a request causes go (its answer and its notifications). */
export interface McpOutput {
  send(message: Record<string, unknown>): void;
}

/** How the server runs. */
export interface McpServerOptions {
  /** Least time between two progress notifications of one call (ms; default 1000). */
  readonly progressMs?: number;
}

/** What the server tells a client in `initialize`: how to use the tools. */
export const MCP_INSTRUCTIONS =
  "Specter runs terminal programs in a sandbox. exec_command runs a command and returns its output " +
  "once it exits, waits at a prompt or yields (at most 30 s); a program still running keeps a session_id: " +
  "continue it with write_stdin (chars, keys such as ctrl-c), or wait for it with an empty write_stdin " +
  "instead of polling. read_output reads any part of a session's output again; close_session ends it; " +
  "list_sessions lists them. The sandbox policy is the server's: no argument can change it.";

type Id = string | number;

class RpcError extends Error {
  constructor(readonly code: number, message: string, readonly data?: Record<string, unknown>) {
    super(message);
  }
}

/** A call in flight: its cancel, and whether its answer is still owed. */
interface InFlight {
  readonly controller: AbortController;
  dropped: boolean;
}

const DROPPED = Symbol("dropped");

/** One MCP session over `tools`. */
export class McpServer {
  readonly #tools: AgentTools;
  readonly #progressMs: number;
  #version: McpProtocolVersion | null = null;
  #initialized = false;
  /** The least severity sent as `notifications/message`; none until the client sets one. */
  #level: McpLogLevel | null = null;
  readonly #inFlight = new Map<string, InFlight>();
  #closed = false;

  constructor(tools: AgentTools, options: McpServerOptions = {}) {
    this.#tools = tools;
    this.#progressMs = options.progressMs ?? 1000;
  }

  /** The revision agreed in `initialize` (null before). */
  get protocolVersion(): McpProtocolVersion | null {
    return this.#version;
  }

  /** Requests being answered now. */
  get busy(): number {
    return this.#inFlight.size;
  }

  /**
   * Handles one message (parsed JSON). Resolves once its answer went to `out` (or was dropped: a
   * notification, a response, a cancelled call).
   */
  async handle(value: unknown, out: McpOutput): Promise<void> {
    const object = typeof value === "object" && value !== null && !Array.isArray(value);
    // A response (no method, a result or an error): this server sends no requests, so it is dropped.
    if (object && !("method" in value) && ("result" in value || "error" in value)) {
      if (McpResponseSchema.safeParse(value).success) return;
    }
    const parsed = McpRequestSchema.safeParse(value);
    if (!parsed.success) {
      out.send(
        errorMessage(
          idOf(value),
          new RpcError(MCP_ERRORS.INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 message"),
        ),
      );
      return;
    }
    const message = parsed.data;
    if (message.id === undefined) {
      this.#notification(message.method, message.params ?? {});
      return;
    }
    const id = message.id;
    try {
      const result = await this.#request(id, message.method, message.params ?? {}, out);
      if (result !== DROPPED && !this.#closed) out.send({ jsonrpc: "2.0", id, result });
    } catch (error: unknown) {
      if (!this.#closed) out.send(errorMessage(id, error));
    }
  }

  /** The session ends: answers still owed are never sent, calls in flight run out on their own. */
  close(): void {
    this.#closed = true;
    for (const call of this.#inFlight.values()) call.dropped = true;
  }

  #notification(method: string, params: Record<string, unknown>): void {
    if (method === "notifications/initialized") {
      if (this.#version !== null) this.#initialized = true;
      return;
    }
    if (method === "notifications/cancelled") {
      const parsed = McpCancelledParamsSchema.safeParse(params);
      if (!parsed.success) return; // A notification is never answered, not even with an error.
      const call = this.#inFlight.get(keyOf(parsed.data.requestId));
      if (call === undefined) return; // Finished already, or never known: a race the spec allows.
      call.dropped = true;
      call.controller.abort();
    }
    // Other notifications (progress of a client, roots changed) mean nothing to this server.
  }

  async #request(
    id: Id,
    method: string,
    params: Record<string, unknown>,
    out: McpOutput,
  ): Promise<unknown> {
    switch (method) {
      case "ping":
        return {};
      case "initialize":
        return this.#initialize(params);
      case "tools/list":
      case "tools/call":
      case "logging/setLevel":
        break;
      default:
        throw new RpcError(MCP_ERRORS.METHOD_NOT_FOUND, `Method not found: "${method.slice(0, 80)}"`);
    }
    if (this.#version === null) {
      throw new RpcError(MCP_ERRORS.INVALID_REQUEST, "The session is not initialized: send initialize first");
    }
    if (method === "tools/list") {
      const { cursor } = parse(McpListToolsParamsSchema, params);
      // One page holds every tool: no cursor was ever given out.
      if (cursor !== undefined) throw new RpcError(MCP_ERRORS.INVALID_PARAMS, "Invalid cursor");
      return { tools: mcpTools() };
    }
    if (method === "logging/setLevel") {
      this.#level = parse(McpSetLevelParamsSchema, params).level;
      return {};
    }
    return await this.#call(id, parse(McpCallToolParamsSchema, params), out);
  }

  #initialize(params: Record<string, unknown>): unknown {
    const { protocolVersion } = parse(McpInitializeParamsSchema, params);
    if (this.#version !== null) {
      throw new RpcError(MCP_ERRORS.INVALID_REQUEST, "The session is initialized already");
    }
    const known = (MCP_PROTOCOL_VERSIONS as readonly string[]).includes(protocolVersion);
    this.#version = known ? protocolVersion as McpProtocolVersion : MCP_LATEST_VERSION;
    return {
      protocolVersion: this.#version,
      capabilities: { tools: { listChanged: false }, logging: {} },
      serverInfo: { name: "specter", title: "Specter", version: VERSION },
      instructions: MCP_INSTRUCTIONS,
    };
  }

  async #call(
    id: Id,
    params: z.infer<typeof McpCallToolParamsSchema>,
    out: McpOutput,
  ): Promise<McpCallResult | typeof DROPPED> {
    const name = params.name;
    if (!(MCP_TOOL_NAMES as readonly string[]).includes(name)) {
      throw new RpcError(MCP_ERRORS.INVALID_PARAMS, `Unknown tool: "${name.slice(0, 80)}"`);
    }
    const key = keyOf(id);
    if (this.#inFlight.has(key)) {
      throw new RpcError(MCP_ERRORS.INVALID_REQUEST, "A request with this id is in flight already");
    }
    const call: InFlight = { controller: new AbortController(), dropped: false };
    this.#inFlight.set(key, call);
    let agent: AgentSession | null = null;
    const watch: CallWatch = { signal: call.controller.signal, session: (a) => agent = a };
    const token = params._meta?.progressToken;
    const started = performance.now();
    let last = 0;
    const timer = token === undefined ? undefined : setInterval(() => {
      if (call.dropped) return; // Notifications only ever refer to a request still owed an answer.
      const elapsed = Math.max(last + 1, Math.round(performance.now() - started));
      last = elapsed;
      const seen = agent === null ? "" : `; session ${agent.id}: ${agent.lastSeq} frames of output so far`;
      out.send({
        jsonrpc: "2.0",
        method: "notifications/progress",
        params: {
          progressToken: token,
          progress: elapsed,
          message: `${(elapsed / 1000).toFixed(1)} s${seen}`,
        },
      });
    }, this.#progressMs);
    try {
      this.#log(out, "debug", { tool: name, request: id });
      const result = await this.#run(name as McpToolName, params.arguments ?? {}, watch);
      if (result.isError) this.#log(out, "warning", { tool: name, error: result.structuredContent.error });
      else if (agent !== null && (agent as AgentSession).exit !== null && name !== "read_output") {
        const exit = (agent as AgentSession).exit!;
        this.#log(out, "info", {
          session: (agent as AgentSession).id,
          exit_code: exit.code,
          signal: exit.signal,
        });
      }
      return call.dropped ? DROPPED : result;
    } finally {
      clearInterval(timer);
      this.#inFlight.delete(key);
    }
  }

  /** Runs a tool; a Specter error (or invalid arguments) is a tool error the model sees. */
  async #run(name: McpToolName, args: Record<string, unknown>, watch: CallWatch): Promise<McpCallResult> {
    const tools = this.#tools;
    try {
      switch (name) {
        case "exec_command":
          return toolResultContent(await tools.execCommand(checked(ExecCommandParamsSchema, args), watch));
        case "write_stdin":
          return toolResultContent(await tools.writeStdin(checked(WriteStdinParamsSchema, args), watch));
        case "read_output":
          return toolResultContent(await tools.readOutput(checked(ReadOutputParamsSchema, args)));
        case "close_session":
          return toolResultContent(await tools.closeSession(checked(CloseSessionParamsSchema, args)));
        case "list_sessions":
          checked(ListSessionsParamsSchema, args);
          return listingContent(tools.listSessions());
      }
    } catch (error: unknown) {
      return errorContent(error instanceof SpecterError ? error : toSpecterError(error));
    }
  }

  /** Sends a log message at `level` when the client asked for that level or a lower one. */
  #log(out: McpOutput, level: McpLogLevel, data: Record<string, unknown>): void {
    if (this.#level === null || MCP_LOG_LEVELS.indexOf(level) < MCP_LOG_LEVELS.indexOf(this.#level)) return;
    out.send({ jsonrpc: "2.0", method: "notifications/message", params: { level, logger: "specter", data } });
  }
}

/** A tool's arguments, or `E_USAGE` naming what is wrong (a tool error the model can correct). */
function checked<T extends z.ZodType>(schema: T, args: unknown): z.infer<T> {
  const result = schema.safeParse(args);
  if (result.success) return result.data;
  throw new UsageError(`Invalid arguments: ${problemsOf(result.error).join("; ").slice(0, 500)}`);
}

/** Params of a method, or -32602 naming the problems. */
function parse<T extends z.ZodType>(schema: T, params: unknown): z.infer<T> {
  const result = schema.safeParse(params);
  if (result.success) return result.data;
  throw new RpcError(
    MCP_ERRORS.INVALID_PARAMS,
    `Invalid params: ${problemsOf(result.error).join("; ").slice(0, 500)}`,
  );
}

function problemsOf(error: z.ZodError): string[] {
  return error.issues.map((issue) =>
    `${issue.path.length > 0 ? issue.path.join(".") : "arguments"}: ${issue.message}`
  );
}

/** The id of a message that failed validation, when it has a usable one. */
export function idOf(value: unknown): Id | null {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

function keyOf(id: Id): string {
  return `${typeof id}:${id}`;
}

/** A JSON-RPC error response for `error` (an unexpected failure is -32603 with its message). */
export function errorMessage(id: Id | null, error: unknown): Record<string, unknown> {
  if (error instanceof RpcError) {
    return {
      jsonrpc: "2.0",
      id,
      error: { code: error.code, message: error.message, ...(error.data ? { data: error.data } : {}) },
    };
  }
  const failure = toSpecterError(error);
  return {
    jsonrpc: "2.0",
    id,
    error: { code: MCP_ERRORS.INTERNAL_ERROR, message: failure.message, data: { code: failure.code } },
  };
}

/** A JSON-RPC error response with `code`. */
export function rpcErrorMessage(id: Id | null, code: number, message: string): Record<string, unknown> {
  return errorMessage(id, new RpcError(code, message));
}

/** The error response to a line that is not JSON. */
export function parseErrorMessage(): Record<string, unknown> {
  return errorMessage(null, new RpcError(MCP_ERRORS.PARSE_ERROR, "Parse error: not valid JSON"));
}

/** The error response to a line over the size cap (`id`: the request's, when its line showed it). */
export function tooLongMessage(maxBytes: number, id: Id | null = null): Record<string, unknown> {
  return errorMessage(
    id,
    new RpcError(MCP_ERRORS.INVALID_REQUEST, `Invalid request: a message over ${maxBytes} bytes`),
  );
}
