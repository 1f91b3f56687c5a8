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
import { type DynamicStructuredTool, tool } from "@langchain/core/tools";
import { z } from "zod";
import type { Client } from "./client.js";
import { SpecterError } from "./errors.js";
import { TOOL_DEFINITIONS } from "./_protocol.js";

/** The tool names, in the order `specterTools` returns them. */
export const TOOL_NAMES = [
  "exec_command",
  "write_stdin",
  "read_output",
  "close_session",
  "list_sessions",
] as const;

/**
 * `schema` without `propertyNames: {type: "string"}` (JSON object keys are strings already): zod reads it
 * as a transform, which LangChain then cannot turn back into JSON Schema for the model.
 */
function withoutStringKeys(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutStringKeys);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    const names = value as { type?: unknown } | null;
    const redundant = key === "propertyNames" && typeof names === "object" &&
      names !== null &&
      Object.keys(names).length === 1 && names.type === "string";
    if (!redundant) out[key] = withoutStringKeys(value);
  }
  return out;
}

/** Calls tool `name` on `client`. */
async function call(
  client: Client,
  name: string,
  input: Record<string, unknown>,
): Promise<unknown> {
  switch (name) {
    case "exec_command":
      return await client.execCommand(input as never);
    case "write_stdin":
      return await client.writeStdin(input as never);
    case "read_output":
      return await client.readOutput(input as never);
    case "close_session":
      return await client.closeSession(input as never);
    case "list_sessions":
      return { sessions: await client.listSessions() };
    default:
      throw new SpecterError("E_RPC", `Unknown tool "${name}"`);
  }
}

/** The agent tools of `client` as LangChain tools. */
export function specterTools(client: Client): DynamicStructuredTool[] {
  return TOOL_NAMES.map((name) => {
    const definition = TOOL_DEFINITIONS.find((d) => d.name === name)!;
    const parameters = withoutStringKeys(definition.parameters);
    const schema = z.fromJSONSchema(
      parameters as Parameters<typeof z.fromJSONSchema>[0],
    );
    return tool(
      async (input: unknown) => {
        try {
          return JSON.stringify(
            await call(client, name, (input ?? {}) as Record<string, unknown>),
          );
        } catch (error: unknown) {
          // The server refused the call: the model reads why. A dead agent is the caller's to handle.
          if (!(error instanceof SpecterError) || error.rpcCode === undefined) {
            throw error;
          }
          return JSON.stringify({
            error: { code: error.code, message: error.message },
          });
        }
      },
      {
        name,
        description: definition.description,
        schema: schema as z.ZodObject,
      },
    );
  });
}
