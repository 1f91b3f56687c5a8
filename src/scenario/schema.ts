/**
 * The scenario format, version 1: a run configuration and the steps that drive and check a program.
 * This zod schema is the single source of truth (`spec/schema/scenario.schema.json` is generated).
 *
 * @module
 */
import { z } from "zod";
import { DRIVER_SIGNALS, DURATION_TOO_LONG, MAX_DURATION_MS } from "../protocol/mod.ts";

/** Scenario format version. */
export const SCENARIO_VERSION = 1;

const positive = z.int().positive();
/** A duration in ms: at most what a timer can wait (a longer one would fire at once). */
const duration = z.int().max(MAX_DURATION_MS, DURATION_TOO_LONG);
const positiveMs = duration.positive();
const timeout = positive.max(600_000).optional().describe(
  "Milliseconds before the step fails (default 10000)",
);

/** Longest regular expression a scenario may hold (a pattern is a few dozen characters in practice). */
export const MAX_PATTERN_LENGTH = 1024;

function compiles(source: string): boolean {
  try {
    new RegExp(source, "gm");
    return true;
  } catch {
    return false; // Reported as a schema problem naming the field, not as a SyntaxError at run time.
  }
}

/** A regular expression, checked when the scenario is loaded (never a SyntaxError mid-run). */
const pattern = z.string().min(1).max(MAX_PATTERN_LENGTH).refine(compiles, {
  message: "must be a valid JavaScript regular expression",
});

/** A relative file path without `.`/`..` segments, so the path stays inside the working directory. */
const relativeFile = z.string().refine(
  (p) => p.length > 0 && !p.startsWith("/") && p.split("/").every((s) => s !== "" && s !== "." && s !== ".."),
  { message: "must be a relative path without empty, . or .. segments" },
);

/** A fresh working directory for the run, archived into its artifacts. */
export const WorkspaceSchema = z.strictObject({
  files: z.record(relativeFile, z.string()).optional().describe(
    "Files to create before the run, by relative path, with their text; none when absent",
  ),
}).describe(
  "A fresh directory in the system temp directory, seeded with files; it becomes the cwd and the policy's " +
    "${workspace}, and is archived into the bundle (workspace/) after the run. Cannot be combined with cwd",
);

/** How the program runs. Absent fields take the session defaults; the sandbox is on (policy strict). */
export const RunConfigSchema = z.strictObject({
  argv: z.array(z.string().min(1)).min(1).describe("Program and arguments"),
  cwd: z.string().optional().describe(
    "Working directory, relative to the scenario file; default: its directory",
  ),
  workspace: WorkspaceSchema.optional(),
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).optional()
    .describe("Variables added to the minimal environment; none when absent"),
  cols: positive.max(1000).optional().describe("Columns (default 80)"),
  rows: positive.max(1000).optional().describe("Rows (default 24)"),
  policy: z.string().optional().describe(
    "Preset name or policy file (relative to the scenario); default strict",
  ),
  ack_unsafe_write: z.boolean().optional().describe("Acknowledge a policy with fs.write"),
  timeout_ms: positiveMs.optional().describe("Wall-clock ceiling of the whole run (the policy's wall_ms)"),
  max_output_bytes: positive.optional().describe("Output ceiling in bytes (the policy's output_bytes)"),
  max_memory_bytes: positive.optional().describe(
    "Memory of the whole process tree in bytes, tmpfs files included (the policy's memory_bytes)",
  ),
  max_procs: positive.optional().describe("Processes in the whole tree (the policy's processes)"),
  allow_binary: z.boolean().optional().describe(
    "Accept output that is not valid UTF-8 (default false: E_TERMINAL_PARSE)",
  ),
  normalize: z.array(z.strictObject({ pattern: pattern, replacement: z.string() })).optional()
    .describe("Extra regex redactions applied before comparing snapshots and transcripts"),
}).refine((run) => run.cwd === undefined || run.workspace === undefined, {
  message: "cwd and workspace cannot be combined (a workspace is the cwd)",
  path: ["workspace"],
});

/** Wait until a condition holds (polling the screen model; never a fixed sleep). */
const WaitForSchema = z.strictObject({
  wait_for: z.union([
    z.strictObject({ text: z.string().min(1) }),
    z.strictObject({ regex: pattern }),
    z.strictObject({ screen_stable: positiveMs.describe("Milliseconds without a screen change") }),
    z.strictObject({ prompt: pattern.describe("Regex the cursor line must match") }),
    z.strictObject({ idle: positiveMs.describe("Milliseconds without output") }),
    z.strictObject({ exit: z.literal(true) }),
  ]),
  timeout_ms: timeout,
  retries: z.int().nonnegative().max(10).optional().describe("Extra attempts after a timeout (default 0)"),
});

/** Assert on what the screen shows, or on the exit. */
const ExpectSchema = z.strictObject({
  expect: z.union([
    z.strictObject({ screen_contains: z.string().min(1) }),
    z.strictObject({ screen_matches: pattern }),
    z.strictObject({ line: z.int().nonnegative(), equals: z.string() }),
    z.strictObject({ cursor: z.strictObject({ x: z.int().nonnegative(), y: z.int().nonnegative() }) }),
    z.strictObject({ alt_screen: z.boolean() }),
    z.strictObject({ exit_code: z.int() }),
    z.strictObject({
      file: relativeFile.describe("A file, relative to the run's working directory (no `..`)"),
      equals: z.string().describe("Its exact text"),
    }),
    z.strictObject({ file: relativeFile, contains: z.string().min(1).describe("Text it contains") }),
    z.strictObject({
      snapshot_equals: relativeFile.describe(
        "Golden .txt file, relative to the scenario's directory (no `..`, no symlink on the way)",
      ),
    }),
  ]),
});

/** One step. Exactly one action key per step. */
export const StepSchema = z.union([
  z.strictObject({ type: z.string().describe("Text to type (no Enter added)") }),
  z.strictObject({
    press: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).describe("Key name(s)"),
  }),
  z.strictObject({ resize: z.strictObject({ cols: positive.max(1000), rows: positive.max(1000) }) }),
  WaitForSchema,
  ExpectSchema,
  z.strictObject({ snapshot: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/).describe("Snapshot name") }),
  z.strictObject({ signal: z.enum(DRIVER_SIGNALS) }),
  z.strictObject({ terminate: z.strictObject({ grace_ms: duration.nonnegative().optional() }) }),
]);

/** A scenario file. */
export const ScenarioSchema = z.strictObject({
  version: z.literal(SCENARIO_VERSION),
  name: z.string().min(1).describe("Human name, shown in summaries"),
  description: z.string().optional(),
  run: RunConfigSchema,
  steps: z.array(StepSchema).min(1),
});

/** A scenario, as validated. */
export type Scenario = z.infer<typeof ScenarioSchema>;
/** One step, as validated. */
export type Step = z.infer<typeof StepSchema>;
/** The run configuration, as validated. */
export type RunConfig = z.infer<typeof RunConfigSchema>;
