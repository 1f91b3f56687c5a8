/**
 * The result documents: `ExecResult` (what `specter exec` prints) and `RunResult` (a scenario run's
 * `run.json`, with one `StepResult` per step). Each has one writer ({@link encodeExecResult},
 * {@link encodeRunResult}) and one reader ({@link decodeExecResult}, {@link decodeRunResult}), both
 * through its schema.
 *
 * @module
 */
import { z } from "zod";
import { FrameSchema } from "./frames.ts";
import { decodeWith } from "./_decode.ts";

/** A Specter error as results carry it. */
export const ResultErrorSchema = z.strictObject({
  code: z.string().describe("Stable error code, e.g. E_SPAWN_NOT_FOUND"),
  message: z.string(),
});

const protectedCreated = z.array(z.string()).optional().describe(
  "Strict-write: protected names (.git, .envrc, …) the run created under its write roots (a warning)",
);

/** The JSON document `specter exec` prints. */
export const ExecResultSchema = z.strictObject({
  success: z.boolean().describe("True when the program exited with code 0 and did not time out"),
  session_id: z.string().nullable().describe("The session id (null when the program could not start)"),
  output: z.string().describe("Output: plain text (ANSI stripped, CRLF → LF) unless --raw"),
  exit_code: z.int().nullable().describe(
    "Exit code, or null when a signal ended the program or it never started",
  ),
  signal: z.string().nullable().describe("Terminating signal name, or null"),
  timed_out: z.boolean().describe("True when --timeout ended the program"),
  truncated: z.boolean().describe("True when --max-output cut the output"),
  duration_ms: z.number().nonnegative().describe("Wall time in ms"),
  protected_created: protectedCreated,
  error: ResultErrorSchema.optional().describe("Present when Specter itself failed (e.g. E_SPAWN_NOT_FOUND)"),
});
/** The JSON document `specter exec` prints. */
export type ExecResult = z.infer<typeof ExecResultSchema>;

/** The outcome of one scenario step. */
export const StepResultSchema = z.strictObject({
  index: z.int().nonnegative().describe("0-based index"),
  line: z.int().nonnegative().describe("Source line in the scenario file"),
  action: z.string().describe("The step in short, e.g. `press down`"),
  status: z.enum(["passed", "failed", "skipped"]).describe("failed stops the run; later steps are skipped"),
  duration_ms: z.number().nonnegative(),
  message: z.string().optional().describe("Why it failed"),
  diagnostic: z.strictObject({
    expected: z.string(),
    actual_screen: z.string(),
    last_frames: z.array(FrameSchema).readonly(),
  }).optional().describe("Expected vs actual, for a failed step"),
});
/** The outcome of one scenario step. */
export type StepResult = z.infer<typeof StepResultSchema>;

/** The result of a scenario run (`run.json`). */
export const RunResultSchema = z.strictObject({
  version: z.literal(1),
  name: z.string(),
  scenario: z.string().describe("The scenario file"),
  status: z.enum(["Passed", "Failed", "Error"]).describe(
    "Passed: every step passed. Failed: a step failed. Error: the run could not be carried out",
  ),
  error: ResultErrorSchema.nullable(),
  session_id: z.string().nullable(),
  steps: z.array(StepResultSchema).readonly(),
  exit: z.strictObject({ code: z.int().nullable(), signal: z.string().nullable(), timed_out: z.boolean() })
    .nullable(),
  duration_ms: z.number().nonnegative(),
  artifacts: z.string().describe("The run's artifacts directory"),
  protected_created: protectedCreated,
});
/** The result of a scenario run (`run.json`). */
export type RunResult = z.infer<typeof RunResultSchema>;

/** A document that did not decode: why, in a sentence (the first problem, with its field). */
export interface DecodeProblem {
  readonly problem: string;
}

function decode<T>(schema: z.ZodType<T>, text: string, what: string): { value: T } | DecodeProblem {
  const decoded = decodeWith(schema, text);
  if ("value" in decoded) return decoded;
  if ("json" in decoded) return { problem: `${what} is not valid JSON` };
  return { problem: `${what}: field "${decoded.field}": ${decoded.message}` };
}

/** The one writer of {@link ExecResult}: validated, then one line of JSON (no newline). */
export function encodeExecResult(result: ExecResult): string {
  return JSON.stringify(ExecResultSchema.parse(result));
}

/**
 * {@link encodeExecResult} for an output too large to be built as one string: the document (validated, its
 * `output` empty) cut where the output's text goes. `head`, the output as JSON string content (what
 * `JSON.stringify` puts between the quotes), then `tail` is the line `encodeExecResult` makes.
 */
export function encodeExecResultAround(result: ExecResult): { head: string; tail: string } {
  const text = encodeExecResult({ ...result, output: "" });
  // Unique: inside a JSON string every quote is escaped, so `"output":` occurs only as the key.
  const at = text.indexOf(`"output":""`) + `"output":"`.length;
  return { head: text.slice(0, at), tail: text.slice(at) };
}

/** The one reader of {@link ExecResult}. */
export function decodeExecResult(text: string): { value: ExecResult } | DecodeProblem {
  return decode(ExecResultSchema, text, "The exec result");
}

/** The one writer of `run.json`: validated, then pretty JSON with a final newline. */
export function encodeRunResult(result: RunResult): string {
  return JSON.stringify(RunResultSchema.parse(result), null, 2) + "\n";
}

/** The one reader of `run.json`. */
export function decodeRunResult(text: string): { value: RunResult } | DecodeProblem {
  return decode(RunResultSchema, text, "The run result");
}
