/**
 * The agent tools as function-calling definitions, generated from their zod schemas: OpenAI's
 * (`{type: "function", function: {name, description, parameters}}`), Anthropic's (`{name, description,
 * input_schema}`) or plain JSON Schema (`{name, description, parameters, result}`).
 *
 * @module
 */
import { z } from "zod";
import {
  CloseSessionParamsSchema,
  ExecCommandParamsSchema,
  ListSessionsParamsSchema,
  ReadOutputParamsSchema,
  ToolResultSchema,
  WriteStdinParamsSchema,
} from "../protocol/mod.ts";

/** The definition styles `specter agent --schema` prints. */
export const TOOL_SCHEMA_FLAVOURS = ["openai", "anthropic", "jsonschema"] as const;
/** A definition style. */
export type ToolSchemaFlavour = typeof TOOL_SCHEMA_FLAVOURS[number];

const TOOLS = [
  {
    name: "exec_command",
    description:
      "Run a command in a sandboxed terminal. Returns its output once it exits, waits at a prompt " +
      "or yield_time_ms passes; a program still running keeps a session_id for write_stdin. Output is " +
      "token-lean (token_mode compact by default) and cut to max_output_tokens without losing error lines.",
    params: ExecCommandParamsSchema,
  },
  {
    name: "write_stdin",
    description: "Type into a running session (chars, keys) and get the output since the last call. With " +
      "nothing to type it waits (up to 30 s by default) until something happens: do not poll in a loop. " +
      "close_stdin ends the input of a tty false program (wc, sort, jq -s then finish).",
    params: WriteStdinParamsSchema,
  },
  {
    name: "read_output",
    description: "Read any part of a session's output again by frame sequence numbers (results give their " +
      "from_seq and to_seq; a cut output names the exact call). One page per call within " +
      "max_output_tokens: while more is true, call again from next_from_seq and next_from_offset.",
    params: ReadOutputParamsSchema,
  },
  {
    name: "close_session",
    description: "End a session (SIGTERM, then SIGKILL after a grace period; force: at once). Returns its " +
      "last output and exit code.",
    params: CloseSessionParamsSchema,
  },
  {
    name: "list_sessions",
    description: "List the sessions: id, command, working directory, running or exit code, start, last " +
      "activity and output tokens so far.",
    params: ListSessionsParamsSchema,
  },
] as const;

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { target: "draft-2020-12", io: "input" }) as Record<
    string,
    unknown
  >;
  return rest;
}

/** The five tools as `flavour` definitions. */
export function toolDefinitions(flavour: ToolSchemaFlavour): unknown[] {
  return TOOLS.map(({ name, description, params }) => {
    const parameters = jsonSchema(params);
    switch (flavour) {
      case "openai":
        return { type: "function", function: { name, description, parameters } };
      case "anthropic":
        return { name, description, input_schema: parameters };
      case "jsonschema":
        return {
          name,
          description,
          parameters,
          result: name === "list_sessions" ? undefined : jsonSchema(ToolResultSchema),
        };
    }
  });
}
