/**
 * The Model Context Protocol messages `specter mcp` (stdio) and the daemon's `/mcp` (Streamable HTTP) read:
 * the JSON-RPC 2.0 envelope, and the params of the methods the server takes. Only what the server parses is
 * here (one reader); what it writes is built from the agent tools' own schemas (`agent.ts`).
 *
 * Revisions: 2025-11-25 (the latest), 2025-06-18 and 2025-03-26, negotiated in `initialize`.
 *
 * @module
 */
import { z } from "zod";

/** Where the daemon's listener serves MCP (Streamable HTTP). */
export const MCP_PATH = "/mcp";

/** The MCP revisions the server speaks, latest first. */
export const MCP_PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26"] as const;
/** An MCP revision the server speaks. */
export type McpProtocolVersion = typeof MCP_PROTOCOL_VERSIONS[number];
/** The revision answered to a client that asks for one the server does not speak. */
export const MCP_LATEST_VERSION: McpProtocolVersion = MCP_PROTOCOL_VERSIONS[0];

/** A JSON-RPC id as MCP allows it (never null in a request). */
const Id = z.union([z.string(), z.number()]);

/** A progress token (`_meta.progressToken`). */
export const McpProgressTokenSchema = z.union([z.string().max(1000), z.number()]);

/** `_meta` of a request's params (other keys are kept, not read). */
const Meta = z.object({ progressToken: McpProgressTokenSchema.optional() }).loose();

/** A request (`id` and `method`) or a notification (`method`, no `id`) from a client. */
export const McpRequestSchema = z.object({
  jsonrpc: z.literal("2.0"),
  id: Id.optional(),
  method: z.string(),
  params: z.record(z.string(), z.unknown()).optional(),
});

/** A response from a client (the server sends no requests, so it reads and ignores them). */
export const McpResponseSchema = z.union([
  z.object({ jsonrpc: z.literal("2.0"), id: z.union([Id, z.null()]), result: z.unknown() }),
  z.object({
    jsonrpc: z.literal("2.0"),
    id: z.union([Id, z.null()]),
    error: z.object({ code: z.number(), message: z.string() }).loose(),
  }),
]);

/**
 * One JSON-RPC 2.0 message as a client sends it: a message with a `method` is a request or notification,
 * one without it and with `result` or `error` a response (never both: a `method` decides).
 */
export const McpMessageSchema = z.union([McpRequestSchema, McpResponseSchema]);
/** One JSON-RPC 2.0 message from a client. */
export type McpMessage = z.infer<typeof McpMessageSchema>;

/** `initialize`'s params. */
export const McpInitializeParamsSchema = z.object({
  protocolVersion: z.string().max(100),
  capabilities: z.record(z.string(), z.unknown()),
  clientInfo: z.object({ name: z.string().max(1000), version: z.string().max(1000) }).loose(),
  _meta: Meta.optional(),
}).loose();

/** `tools/call`'s params. */
export const McpCallToolParamsSchema = z.object({
  name: z.string().max(200),
  arguments: z.record(z.string(), z.unknown()).optional(),
  _meta: Meta.optional(),
}).loose();

/** `tools/list`'s params (one page: the server has five tools). */
export const McpListToolsParamsSchema = z.object({
  cursor: z.string().max(1000).optional(),
  _meta: Meta.optional(),
}).loose();

/** The syslog severities of `logging/setLevel` and `notifications/message`, least severe first. */
export const MCP_LOG_LEVELS = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
] as const;
/** A log severity. */
export type McpLogLevel = typeof MCP_LOG_LEVELS[number];

/** `logging/setLevel`'s params. */
export const McpSetLevelParamsSchema = z.object({
  level: z.enum(MCP_LOG_LEVELS),
  _meta: Meta.optional(),
}).loose();

/** `notifications/cancelled`'s params. */
export const McpCancelledParamsSchema = z.object({
  requestId: Id,
  reason: z.string().optional(),
}).loose();

/** JSON-RPC error codes the MCP server answers with. */
export const MCP_ERRORS = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
} as const;

/** What a failed tool call's `structuredContent` is: the stable error code and its message. */
export const McpToolErrorSchema = z.object({
  error: z.object({
    code: z.string().describe("The stable error code (E_...), see spec/errors.md"),
    message: z.string(),
  }),
});
