/**
 * The agent interface: tools over sessions (`exec_command`, `write_stdin`, `read_output`, `close_session`,
 * `list_sessions`) and their JSON-RPC 2.0 server (`specter agent`).
 *
 * @module
 */
export {
  AGENT_ENV,
  AGENT_PROMPTS,
  AgentTools,
  type CallWatch,
  type SessionAudit,
  type ToolOptions,
  WAIT_QUIET_MS,
} from "./tools.ts";
export { AgentSession } from "./agent_session.ts";
export type { OutputLog, OutputLogFactory } from "./output_log.ts";
export { PROTECTED_RECENT, victimFor } from "./pruning.ts";
export { type Dropped, type FrameSource, MAX_PAGE_FRAMES, type Page, readPage } from "./paging.ts";
export { feedView, type ViewFrame, viewFrames } from "./view_stream.ts";
export { MAX_REQUEST_BYTES, type RpcIo, serveAgent } from "./server.ts";
export {
  IMPORTANT_LINE,
  OutputCut,
  type OutputCutOptions,
  tokenCount,
  type Truncated,
  truncateOutput,
} from "./truncate.ts";
export { TOOL_SCHEMA_FLAVOURS, toolDefinitions, type ToolSchemaFlavour } from "./tool_definitions.ts";
export { type HintContext, policyHint } from "./policy_hint.ts";
