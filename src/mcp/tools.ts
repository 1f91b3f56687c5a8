/**
 * The agent tools as MCP tools: their definitions for `tools/list` (input and output schemas generated
 * from the zod schemas in `protocol/agent.ts`, the one source of truth) and their results as
 * `tools/call` answers: `content` is one text block (the output, then a status line an agent needs),
 * `structuredContent` the whole result object; a failure is `isError: true` with the stable error code.
 *
 * @module
 */
import { z } from "zod";
import { toolDefinitions } from "../agent/mod.ts";
import {
  McpToolErrorSchema,
  type SessionListing,
  SessionListingSchema,
  type ToolResult,
  ToolResultSchema,
} from "../protocol/mod.ts";
import type { SpecterError } from "../errors.ts";

/** The names of the tools (each ≤ 64 characters of `[A-Za-z0-9_]`). */
export const MCP_TOOL_NAMES = [
  "exec_command",
  "write_stdin",
  "read_output",
  "close_session",
  "list_sessions",
] as const;
/** A tool's name. */
export type McpToolName = typeof MCP_TOOL_NAMES[number];

/** What `list_sessions` returns. */
export const SessionListSchema = z.object({ sessions: z.array(SessionListingSchema) });

const TITLES: Record<McpToolName, string> = {
  exec_command: "Run a command in the sandbox",
  write_stdin: "Type into a session, or wait for it",
  read_output: "Read a session's output again",
  close_session: "End a session",
  list_sessions: "List sessions",
};

/** Hints for hosts (untrusted by spec): what each tool may do. */
const ANNOTATIONS: Record<McpToolName, Record<string, boolean>> = {
  // A command may change files the policy lets it write: destructive; the sandbox's network is the
  // policy's (none by default), but the hint says what the tool can reach in general.
  exec_command: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  write_stdin: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  read_output: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  close_session: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  list_sessions: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
};

/** A zod schema as JSON Schema 2020-12 (the dialect MCP assumes when `$schema` is absent), without `$schema`. */
function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { target: "draft-2020-12", io }) as Record<
    string,
    unknown
  >;
  return rest;
}

/**
 * The output schema of a tool: its result, or the error object of a failed call (`isError: true`). MCP
 * wants `type: "object"` at the top, and a client checks `structuredContent` against it even on an error.
 */
function outputSchema(result: z.ZodType): Record<string, unknown> {
  return { type: "object", anyOf: [jsonSchema(result, "output"), jsonSchema(McpToolErrorSchema, "output")] };
}

let cached: readonly Record<string, unknown>[] | null = null;

/** The five tools as MCP tool definitions (`tools/list`'s `tools`). */
export function mcpTools(): readonly Record<string, unknown>[] {
  if (cached !== null) return cached;
  const plain = toolDefinitions("jsonschema") as {
    name: McpToolName;
    description: string;
    parameters: object;
  }[];
  cached = plain.map(({ name, description, parameters }) => ({
    name,
    title: TITLES[name],
    description,
    inputSchema: parameters,
    outputSchema: outputSchema(name === "list_sessions" ? SessionListSchema : ToolResultSchema),
    annotations: { title: TITLES[name], ...ANNOTATIONS[name] },
  }));
  return cached;
}

/** A `tools/call` result. */
export interface McpCallResult {
  readonly content: readonly { readonly type: "text"; readonly text: string }[];
  readonly structuredContent: Record<string, unknown>;
  readonly isError: boolean;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** The status line of a tool result: what an agent needs to go on without reading the structure. */
export function statusLine(result: ToolResult): string {
  const parts: string[] = [];
  const id = result.session_id ?? "?";
  if (result.running) {
    parts.push(
      `session ${id} still running (returned on ${result.returned_on} after ${seconds(result.wall_time_ms)})`,
    );
    parts.push(`write_stdin {"session_id": "${id}"} types or waits`);
  } else {
    const how = result.signal !== undefined
      ? `killed by ${result.signal}`
      : `exited with code ${result.exit_code ?? "unknown"}`;
    parts.push(`session ${id} ${how}${result.timed_out ? " (timed out)" : ""}`);
  }
  if (result.command !== undefined) {
    parts.push(`shell command exit code ${result.command.exit_code ?? "unknown"}`);
  }
  if (result.screen === "alternate") parts.push("a full-screen program holds the screen (token_mode parsed)");
  if (result.dropped !== undefined) {
    parts.push(
      `frames ${result.dropped.from_seq}-${result.dropped.to_seq} are gone (an output budget dropped them)`,
    );
  } else if (result.truncated && result.more === undefined) {
    parts.push(
      `output cut to max_output_tokens (${result.original_token_count} tokens in all): read_output ` +
        `{"session_id": "${id}", "from_seq": ${result.from_seq}} pages through it`,
    );
  }
  if (result.more === true && result.next_from_seq !== undefined) {
    const offset = result.next_from_offset === undefined ? "" : `, "from_offset": ${result.next_from_offset}`;
    parts.push(`more: read_output {"session_id": "${id}", "from_seq": ${result.next_from_seq}${offset}}`);
  }
  // An empty range (nothing new since the last call) is said so, not as from > to.
  parts.push(
    result.to_seq < result.from_seq
      ? `no new frames after ${result.to_seq}`
      : `frames ${result.from_seq}-${result.to_seq}`,
  );
  if (result.pruned !== undefined) parts.push(`session ${result.pruned} was ended to make room`);
  const status = `[${parts.join("; ")}]`;
  // The policy's own line (it names the flag that would allow what failed) goes beside the status.
  return result.policy_hint === undefined ? status : `${status}\n${result.policy_hint}`;
}

/** A tool's result as MCP content: the output text, then the status line; the whole object structured. */
export function toolResultContent(result: ToolResult): McpCallResult {
  const output = result.output;
  const text = output === ""
    ? statusLine(result)
    : `${output}${output.endsWith("\n") ? "" : "\n"}${statusLine(result)}`;
  return { content: [{ type: "text", text }], structuredContent: { ...result }, isError: false };
}

/** `list_sessions` as MCP content: one line per session. */
export function listingContent(listing: { sessions: SessionListing[] }): McpCallResult {
  const lines = listing.sessions.map((s) =>
    `session ${s.session_id}: ${
      s.running ? "running" : s.exit_code === null ? "ended by a signal" : `exited with code ${s.exit_code}`
    }` +
    `${s.timed_out ? " (timed out)" : ""}; ${JSON.stringify(s.argv.join(" ").slice(0, 200))} in ${s.cwd}; ` +
    `last activity ${s.last_activity}`
  );
  return {
    content: [{ type: "text", text: lines.length === 0 ? "No sessions" : lines.join("\n") }],
    structuredContent: { sessions: listing.sessions },
    isError: false,
  };
}

/** A failed call (a Specter error, invalid arguments) as a tool error the model can correct. */
export function errorContent(error: SpecterError): McpCallResult {
  const message = error.message.slice(0, 4000);
  return {
    content: [{ type: "text", text: `${error.code}: ${message}` }],
    structuredContent: { error: { code: error.code, message } },
    isError: true,
  };
}
