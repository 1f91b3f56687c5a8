/**
 * `@specter/client`: drive terminal programs in Specter's sandbox from Node (≥ 20), Bun or Deno, through a
 * `specter agent` process (JSON-RPC 2.0 over NDJSON on its stdio; spec/agent.md).
 *
 * ```ts
 * import { Client } from "@specter/client";
 * const client = new Client(); // the command in $SPECTER_COMMAND, else `specter agent`
 * const repl = await client.execCommand({ cmd: ["python3", "-q"] });
 * const answer = await client.writeStdin({ session_id: repl.session_id!, chars: "6 * 7\r" });
 * console.log(answer.output); // 42
 * await client.close();
 * ```
 *
 * @module
 */
export { agentCommand, Client, type ClientOptions, findSpecter, type Lease, Session, type StartOptions, type TokenMode, } from "./client.js";
export { SpecterError } from "./errors.js";
export { type ExpectMatch, type Frame, frameText, Subscription } from "./subscription.js";
export type { AgentExit } from "./rpc.js";
export { shellWords } from "./words.js";
export { type CloseSessionParams, type ExecCommandParams, type RawFrame, type ReadOutputParams, type SessionListing, type SubscribeParams, TOOL_DEFINITIONS, type ToolDefinition, type ToolResult, type ViewEvent, type WriteStdinParams, } from "./_protocol.js";
