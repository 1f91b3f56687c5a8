/**
 * The agent tools (`specter agent`): their parameters and results, and the JSON-RPC 2.0 envelopes they
 * travel in (one request or response per line). The descriptions are written for a model: they are what
 * `specter agent --schema` prints as function definitions.
 *
 * @module
 */
import { z } from "zod";
import { TokenModeSchema } from "./views.ts";
import { REPORTERS } from "./frames.ts";

/** Where a yield time starts and ends for calls that run or write (ms). */
export const YIELD_LIMITS = { min: 250, max: 30_000, default: 10_000 } as const;
/** Yield limits of an empty `write_stdin` (a wait, not a poll). */
export const WAIT_LIMITS = { min: 5_000, max: 300_000, default: 30_000 } as const;
/** Default `max_output_tokens`. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 10_000;

const sessionId = z.union([z.string().min(1).max(200), z.int().nonnegative()]).describe(
  "A session id returned by exec_command (a number is taken as its decimal string)",
);
const maxOutputTokens = z.int().min(1).max(1_000_000).optional().describe(
  "Most tokens of output to return (default 10000). Over it, the head and tail are kept with every error, " +
    "failure and warning line from the middle; the rest stays readable with read_output.",
);
const tokenMode = TokenModeSchema.optional().describe(
  "compact (default): text without colours, progress bars in their final state, repeats counted; " +
    "parsed: full-screen programs as their screen and changed rows; raw: the bytes as written",
);

/**
 * A string that becomes a C string (an argument, a path, an environment entry): a NUL would end it there,
 * so the program would run something other than what was asked (and logged).
 */
const cString = z.string().regex(/^[^\0]*$/, "must not contain a NUL character (\\u0000)");

/** `exec_command`: start a program (or a shell command) in the sandbox. */
export const ExecCommandParamsSchema = z.strictObject({
  cmd: z.union([cString.min(1), z.array(cString).min(1)], {
    error: (issue) =>
      issue.code === "invalid_union" && issue.errors.some((e) => e.some((i) => i.code === "invalid_format"))
        ? "must not contain a NUL character (\\u0000)"
        : "expected a command line (a non-empty string) or an argv array of strings",
  }).describe(
    "A shell command line (run by the sandbox's shell) or an argv array (run directly)",
  ),
  workdir: cString.min(1).optional().describe(
    "Working directory: absolute, or relative to the server's (default: the server's). It must exist and be " +
      "visible under the server's policy, else the call fails with E_SPAWN_CWD (never another directory)",
  ),
  shell: cString.min(1).max(4096).optional().describe(
    "The shell that runs a string cmd, a path or a name on PATH (bash, sh, zsh); default bash, else sh",
  ),
  login: z.boolean().optional().describe(
    "Run a string cmd in a login shell (-l -c: it reads /etc/profile and the profile in HOME first); " +
      "default false",
  ),
  tty: z.boolean().optional().describe(
    "Run on a terminal (default true). false: plain pipes-like stdio (a socket), no echo, no colours " +
      "or pagers from programs that check for a terminal; control keys are bytes, not signals",
  ),
  yield_time_ms: z.number().optional().describe(
    "Return after this long if the program neither exits, finishes the command nor waits at a prompt " +
      "(default 10000, clamped 250-30000). A program still running keeps its session_id.",
  ),
  max_output_tokens: maxOutputTokens,
  token_mode: tokenMode,
  // Names are checked by the tools (a pattern on a record's keys is more than some JSON Schema consumers
  // take: LangChain.js could not convert it).
  env: z.record(z.string(), cString).optional().describe("Extra environment variables"),
});
/** Parameters of `exec_command`. */
export type ExecCommandParams = z.infer<typeof ExecCommandParamsSchema>;

/** `write_stdin`: type into a running session, or wait for it. */
export const WriteStdinParamsSchema = z.strictObject({
  session_id: sessionId,
  chars: z.string().optional().describe(
    "Text to type (\\r is Enter). Empty or absent: wait until something happens (exit, a finished " +
      "command, a prompt, or new output followed by quiet) instead of polling; do not poll in a loop.",
  ),
  keys: z.array(z.string()).optional().describe('Named keys to press after chars, e.g. ["ctrl-c"], ["up"]'),
  close_stdin: z.boolean().optional().describe(
    "After chars and keys, end the program's input (it reads end-of-file: wc, sort, jq -s then finish). " +
      'Only for tty false; on a terminal press keys ["ctrl-d"] instead',
  ),
  yield_time_ms: z.number().optional().describe(
    "Return after this long at most (default 10000, clamped 250-30000; for a wait, default 30000, " +
      "clamped 5000-300000)",
  ),
  max_output_tokens: maxOutputTokens,
  token_mode: tokenMode,
});
/** Parameters of `write_stdin`. */
export type WriteStdinParams = z.infer<typeof WriteStdinParamsSchema>;

/** `read_output`: any part of a session's output again, by frame sequence numbers. */
export const ReadOutputParamsSchema = z.strictObject({
  session_id: sessionId,
  from_seq: z.int().nonnegative().describe(
    "First frame to read (results carry their seq range; a page's next_from_seq continues it)",
  ),
  from_offset: z.int().nonnegative().optional().describe(
    "Characters of frame from_seq's output already read: a page's next_from_offset (default 0)",
  ),
  to_seq: z.int().nonnegative().optional().describe(
    "Last frame to read (default: the latest). One call returns one page of whole lines within " +
      "max_output_tokens; while more is true, call again with next_from_seq and next_from_offset",
  ),
  token_mode: tokenMode,
  max_output_tokens: maxOutputTokens,
});
/** Parameters of `read_output`. */
export type ReadOutputParams = z.infer<typeof ReadOutputParamsSchema>;

/** `close_session`: end a session. */
export const CloseSessionParamsSchema = z.strictObject({
  session_id: sessionId,
  force: z.boolean().optional().describe("SIGKILL at once instead of SIGTERM with a grace period"),
});
/** Parameters of `close_session`. */
export type CloseSessionParams = z.infer<typeof CloseSessionParamsSchema>;

/** `list_sessions`: the sessions this server holds. */
export const ListSessionsParamsSchema = z.strictObject({});

/** Why a call returned. */
export const RETURNED_ON = ["exit", "command", "prompt", "quiet", "yield"] as const;

/** The result of `exec_command`, `write_stdin` and `read_output`. */
export const ToolResultSchema = z.object({
  session_id: z.string().optional().describe("Present while the program runs: pass it to write_stdin"),
  output: z.string().describe("Output since the previous call (or the range asked for), in token_mode"),
  running: z.boolean(),
  exit_code: z.int().optional().describe("The program's exit code, once it exited"),
  signal: z.string().optional().describe("The signal that ended it, if one did"),
  timed_out: z.boolean(),
  wall_time_ms: z.number().nonnegative(),
  truncated: z.boolean().describe(
    "True when output does not show all of its range: cut to max_output_tokens, or frames not shown or " +
      "dropped (see dropped)",
  ),
  original_token_count: z.int().nonnegative().describe("Tokens of the output before any cut"),
  token_mode: TokenModeSchema,
  returned_on: z.enum(RETURNED_ON).describe("What ended the wait"),
  screen: z.enum(["normal", "alternate"]).describe("alternate: a full-screen program (TUI) is running"),
  from_seq: z.int().nonnegative().describe("First frame the output covers"),
  to_seq: z.int().nonnegative().describe("Last frame the output covers"),
  last_lines: z.array(z.string()).optional().describe("Once the program exited: its last lines of output"),
  next_from_seq: z.int().nonnegative().optional().describe("read_output: the frame the next page starts in"),
  next_from_offset: z.int().nonnegative().optional().describe(
    "read_output: characters of frame next_from_seq's output this and earlier pages showed (pass as " +
      "from_offset; 0 when the next page starts at a frame's start)",
  ),
  more: z.boolean().optional().describe(
    "read_output: true while frames of the range asked for remain after this page (call again with " +
      "next_from_seq and next_from_offset)",
  ),
  dropped: z.object({ from_seq: z.int().nonnegative(), to_seq: z.int().nonnegative() }).optional().describe(
    "Frames of the range that no log holds any more (an output-log budget dropped them): they cannot be read",
  ),
  shell: z.string().optional().describe("The shell that ran a string cmd"),
  command: z.object({
    command: z.string().optional(),
    exit_code: z.int().nullable(),
    duration_ms: z.number().nonnegative(),
    reported_by: z.enum(REPORTERS).describe(
      "shell: marked by Specter's integration (only the shell can); output: marks any program could print",
    ),
  }).optional().describe(
    "With returned_on command: the command a shell finished (OSC 133) and its status, as the shell claims " +
      "it (exit_code above is the kernel's, for the program itself)",
  ),
  pruned: z.string().optional().describe("A session ended to make room for this one"),
  policy_hint: z.string().optional().describe(
    "When the command failed on something the sandbox policy forbids (a hidden path or program, a " +
      "read-only file system): one line naming the policy and the flag that would allow it",
  ),
});
/** The result of a tool call that returns output. */
export type ToolResult = z.infer<typeof ToolResultSchema>;

/** One session in `list_sessions`. */
export const SessionListingSchema = z.object({
  session_id: z.string(),
  argv: z.array(z.string()),
  cwd: z.string(),
  running: z.boolean(),
  exit_code: z.int().nullable(),
  timed_out: z.boolean(),
  started: z.string().describe("ISO 8601"),
  last_activity: z.string().describe("ISO 8601: the last output or call"),
  output_tokens: z.int().nonnegative().describe("Tokens of output returned to the agent so far"),
});
/** One session in `list_sessions`. */
export type SessionListing = z.infer<typeof SessionListingSchema>;

/** `session.subscribe`: stream a session's frames as `session.frame` notifications. */
export const SubscribeParamsSchema = z.strictObject({
  session_id: sessionId,
  from_seq: z.int().nonnegative().optional(),
  token_mode: TokenModeSchema.optional(),
});

/** `session.start` (for programs): start a session and return at once; its frames come by subscription. */
export const StartParamsSchema = ExecCommandParamsSchema.pick({
  cmd: true,
  workdir: true,
  shell: true,
  login: true,
  tty: true,
  env: true,
});
/** Parameters of `session.start`. */
export type StartParams = z.infer<typeof StartParamsSchema>;

/** What `session.start` returns. */
export const StartResultSchema = z.strictObject({
  session_id: sessionId,
  shell: z.string().optional().describe("The shell that runs a string cmd"),
  pruned: z.string().optional().describe("A session ended to make room for this one"),
});
/** What `session.start` returns. */
export type StartResult = z.infer<typeof StartResultSchema>;

/** `session.unsubscribe`. */
export const UnsubscribeParamsSchema = z.strictObject({ subscription: z.string() });

/** A JSON-RPC 2.0 request (a notification when `id` is absent). */
export const JsonRpcRequestSchema = z.object({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number(), z.null()]).optional(),
  method: z.string(),
  params: z.unknown().optional(),
});
/** A JSON-RPC 2.0 request. */
export type JsonRpcRequest = z.infer<typeof JsonRpcRequestSchema>;

/** JSON-RPC 2.0 error codes used by `specter agent`. */
/** A JSON-RPC id: a string or an integer, as written in the request. */
const ID = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`;
/** `"id"` as the first member of the object, or after `"jsonrpc"` (how most clients write requests). */
const ID_AT_HEAD = new RegExp(
  String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*` + ID + String.raw`\s*[,}]`,
);
/** `"id"` as the last member of the object (the MCP TypeScript SDK writes it after `params`). */
const ID_AT_TAIL = new RegExp(String.raw`,\s*"id"\s*:\s*` + ID + String.raw`\s*\}\s*$`);

/**
 * The `id` of a request from the first and last bytes of its line (one too long to be read whole), or null
 * when neither shows it where only the request's own `id` can be: first (or after `"jsonrpc"`) or last in
 * the object. A member nested in `params` never matches (it is neither).
 */
export function requestIdOf(head: string | undefined, tail: string | undefined): string | number | null {
  const found = ID_AT_HEAD.exec(head ?? "")?.[1] ?? ID_AT_TAIL.exec(tail ?? "")?.[1];
  if (found === undefined) return null;
  try {
    const id: unknown = JSON.parse(found);
    return typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id)) ? id : null;
  } catch {
    return null; // An escape JSON does not take: no id to answer.
  }
}

export const JSONRPC_ERRORS = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** A Specter error: its stable code is in `error.data.code`. */
  SERVER_ERROR: -32000,
} as const;

/** A JSON-RPC 2.0 response. */
export const JsonRpcResponseSchema = z.union([
  z.object({
    jsonrpc: z.literal("2.0"),
    id: z.union([z.string(), z.number(), z.null()]),
    result: z.unknown(),
  }),
  z.object({
    jsonrpc: z.literal("2.0"),
    id: z.union([z.string(), z.number(), z.null()]),
    error: z.object({
      code: z.int(),
      message: z.string(),
      data: z.object({ code: z.string().optional() }).loose().optional(),
    }),
  }),
]);
/** A JSON-RPC 2.0 response. */
export type JsonRpcResponse = z.infer<typeof JsonRpcResponseSchema>;
