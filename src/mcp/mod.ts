/**
 * The agent tools as a Model Context Protocol server: the transport-independent core (`McpServer`: one
 * client's MCP session, message in, answers and notifications out), stdio (`specter mcp`) and Streamable
 * HTTP (the daemon's `/mcp`).
 *
 * @module
 */
export { MCP_INSTRUCTIONS, type McpOutput, McpServer, type McpServerOptions } from "./server.ts";
export { MCP_MAX_MESSAGE_BYTES, serveMcpStdio } from "./stdio.ts";
export {
  MAX_MCP_SESSIONS,
  MCP_SESSION_IDLE_MS,
  McpHttp,
  type McpHttpReply,
  type McpHttpRequest,
} from "./http.ts";
export {
  errorContent,
  listingContent,
  MCP_TOOL_NAMES,
  type McpCallResult,
  type McpToolName,
  mcpTools,
  SessionListSchema,
  statusLine,
  toolResultContent,
} from "./tools.ts";
