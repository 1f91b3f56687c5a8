/**
 * `@specter/client/langchain`: the five agent tools as LangChain.js tools (`tool()` from
 * `@langchain/core/tools`), their zod schemas made from the same JSON Schemas the server validates with.
 *
 * ```ts
 * import { Client } from "@specter/client";
 * import { specterTools } from "@specter/client/langchain";
 * const tools = specterTools(new Client());
 * const model = chatModel.bindTools(tools);
 * ```
 *
 * A tool returns the result as JSON text (the model reads `output`, `exit_code`, `returned_on`, …); a
 * failed call returns the error's code and message, so the model can correct itself.
 *
 * @module
 */
import { type DynamicStructuredTool } from "@langchain/core/tools";
import type { Client } from "./client.js";
/** The tool names, in the order `specterTools` returns them. */
export declare const TOOL_NAMES: readonly ["exec_command", "write_stdin", "read_output", "close_session", "list_sessions"];
/** The agent tools of `client` as LangChain tools. */
export declare function specterTools(client: Client): DynamicStructuredTool[];
