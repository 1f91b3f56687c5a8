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
export { agentCommand, Client, findSpecter, Session, } from "./client.js";
export { SpecterError } from "./errors.js";
export { frameText, Subscription } from "./subscription.js";
export { shellWords } from "./words.js";
export { TOOL_DEFINITIONS, } from "./_protocol.js";
