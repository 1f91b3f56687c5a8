/**
 * Replaying a scenario bundle: re-runs `scenario.resolved.json` and compares the new run with the recorded
 * one (snapshots, transcript, results) after normalization. Outputs go to `DIR/replay/`, which the
 * original `checksums.json` does not cover (it is written after the run was sealed); the new run's own
 * bundle under `DIR/replay/run/` carries its own checksums.
 *
 * @module
 */
import { join } from "node:path";
import { z } from "zod";
import { CHECKSUMS_FILE, REPLAY_DIR, verifyChecksums } from "../artifacts/bundle.ts";
import { SpecterError } from "../errors.ts";
import { FrameSchema } from "../frames/schema.ts";
import { runScenario } from "../scenario/runner.ts";
import {
  bundleError,
  parseJson,
  readBundleFile,
  recordedPolicy,
  type RecordedResult,
  recordedRun,
  recordedScenario,
} from "./_bundle.ts";
import { unifiedDiff } from "./diff.ts";
import { FILTER_NAMES, type FilterName, normalizeText, parseFilters, type Redaction } from "./normalize.ts";
import type { ReplaySettings } from "../policy/mod.ts";

export { REPLAY_DIR };

/** What a replay is asked to do; absent fields take the defaults noted on each. */
export interface ReplayOptions {
  /** Disable every filter and redaction (default false). */
  readonly strict?: boolean;
  /** `all` (default), `none`, or a comma-separated list of filter names. */
  readonly normalize?: string;
  /** Fail with `E_REPLAY_CHECKSUM` unless `checksums.json` matches every file (default false). */
  readonly requireChecksums?: boolean;
  /** Fail with `E_REPLAY_EVENTS` unless `events.ndjson` holds valid frames (default false). */
  readonly requireEvents?: boolean;
}

const source = z.string().describe(
  "Where the setting came from: `default`, `flag --strict`, `flag --normalize`, `policy replay.normalize`, " +
    "or for redactions `scenario run.normalize` and/or `policy replay.redactions` joined by ` + `",
);

/** The normalization a replay applies (`normalization.json`): each setting with where it came from. */
export const NormalizationSettingsSchema = z.object({
  filters: z.object({ value: z.array(z.enum(FILTER_NAMES as [FilterName, ...FilterName[]])), source }),
  redactions: z.object({
    value: z.array(z.object({ pattern: z.string(), replacement: z.string() })),
    source,
  }),
});

/** The normalization a replay applies. */
export type NormalizationSettings = z.infer<typeof NormalizationSettingsSchema>;

/** One difference between the recorded run and the replay (an entry of `diff.json`). */
export const ReplayDifferenceSchema = z.object({
  kind: z.enum(["snapshot", "transcript", "result"]),
  name: z.string().describe("The snapshot file without extension, `session.cast` or `run.json`"),
  diff: z.string().describe("A unified diff, recorded → replayed"),
});

/** One difference between the recorded run and the replay. */
export type ReplayDifference = z.infer<typeof ReplayDifferenceSchema>;

/**
 * The summary of one replay (`replay.json`). `Match`: nothing differs after normalization. `Drift`:
 * something does (see `diff.json`). `Error`: the replayed run could not be carried out although the
 * recorded one was (for example its policy file or program is gone).
 */
export const ReplayReportSchema = z.object({
  version: z.literal(1),
  status: z.enum(["Match", "Drift", "Error"]),
  bundle: z.string(),
  replay_run: z.string().describe("The replayed run's own bundle"),
  replay_status: z.enum(["Passed", "Failed", "Error"]),
  replay_error: z.object({ code: z.string(), message: z.string() }).nullable(),
  normalization: NormalizationSettingsSchema,
  compared: z.object({ snapshots: z.int().nonnegative(), transcript: z.boolean(), result: z.boolean() }),
  differences: z.int().nonnegative(),
  at: z.string().describe("When the replay ran (ISO 8601)"),
});

/** The summary of one replay. */
export type ReplayReport = z.infer<typeof ReplayReportSchema>;

/**
 * Resolves the normalization settings, recording each one's source. Filters: `--strict` (none), else
 * `--normalize`, else the policy's `replay.normalize`, else all. Redactions: none under `--strict`,
 * else the scenario's `run.normalize` followed by the policy's `replay.redactions`.
 */
export function resolveNormalization(
  options: Pick<ReplayOptions, "strict" | "normalize">,
  scenarioRedactions: readonly Redaction[],
  policy: ReplaySettings | null = null,
): NormalizationSettings {
  if (options.strict === true) {
    return {
      filters: { value: [], source: "flag --strict" },
      redactions: { value: [], source: "flag --strict" },
    };
  }
  const policyRedactions = policy?.redactions ?? [];
  const sources = [
    ...(scenarioRedactions.length > 0 ? ["scenario run.normalize"] : []),
    ...(policyRedactions.length > 0 ? ["policy replay.redactions"] : []),
  ];
  const redactions = {
    value: [...scenarioRedactions, ...policyRedactions].map((r) => ({ ...r })),
    source: sources.length > 0 ? sources.join(" + ") : "default",
  };
  const filters = options.normalize !== undefined
    ? { value: parseFilters(options.normalize), source: "flag --normalize" }
    : policy !== null && policy.normalize !== null
    ? { value: [...policy.normalize], source: "policy replay.normalize" }
    : { value: [...FILTER_NAMES], source: "default" };
  return { filters, redactions };
}

/** Checks `checksums.json` against the bundle; throws `E_REPLAY_CHECKSUM` on any difference. */
export function requireChecksums(dir: string): void {
  const report = verifyChecksums(dir);
  if (report.ok) return;
  const what = report.noChecksums ? `"${CHECKSUMS_FILE}" is missing or unreadable` : [
    ...report.altered.map((f) => `"${f}" altered`),
    ...report.missing.map((f) => `"${f}" missing`),
    ...report.added.map((f) => `"${f}" added`),
  ].join(", ");
  throw new SpecterError("E_REPLAY_CHECKSUM", `Bundle "${dir}" fails its checksums: ${what}`, {
    details: { dir, altered: report.altered, missing: report.missing, added: report.added },
  });
}

/** Checks that `events.ndjson` exists and every line is a valid frame; throws `E_REPLAY_EVENTS`. */
export function requireEvents(dir: string): void {
  const text = readBundleFile(dir, "events.ndjson");
  const fail = (why: string) =>
    new SpecterError("E_REPLAY_EVENTS", `Bundle "${dir}": events.ndjson ${why}`, { details: { dir } });
  if (text === null) throw fail("is missing");
  const lines = text.split("\n").filter((l) => l !== "");
  if (lines.length === 0) throw fail("is empty");
  for (const [i, line] of lines.entries()) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw fail(`line ${i + 1} is not JSON`); // The parse error adds nothing for the reader.
    }
    if (!FrameSchema.safeParse(value).success) throw fail(`line ${i + 1} is not a valid frame`);
  }
}

function resultText(result: RecordedResult): string {
  const lines = [`status: ${result.status}`, `error: ${result.error?.code ?? "none"}`];
  for (const s of result.steps) lines.push(`step ${s.index + 1} ${s.action}: ${s.status}`);
  lines.push(`exit: ${JSON.stringify(result.exit)}`);
  return lines.join("\n") + "\n";
}

/**
 * Re-runs a bundle's scenario under the policy it recorded and compares; writes
 * `replay/{normalization,replay,diff}.json` and the new run in `replay/run/`. Everything recorded is
 * validated first (`E_REPLAY_BUNDLE`, `E_REPLAY_CHECKSUM`, `E_REPLAY_EVENTS`). The report's status is
 * `Error` when the replayed run could not be carried out although the recorded one was.
 */
export async function replayBundle(
  dir: string,
  options: ReplayOptions = {},
): Promise<{ report: ReplayReport; differences: ReplayDifference[] }> {
  const { loaded, recordedCwd, policy, settings } = prepare(dir, options);
  const recorded = recordedRun(dir);
  const runDir = join(dir, REPLAY_DIR, "run");
  const out = join(dir, REPLAY_DIR);
  try {
    Deno.removeSync(out, { recursive: true });
  } catch {
    // No earlier replay: nothing to clear.
  }
  Deno.mkdirSync(out, { recursive: true, mode: 0o700 });
  const write = (name: string, value: unknown) =>
    Deno.writeTextFileSync(join(out, name), JSON.stringify(value, null, 2) + "\n");
  write("normalization.json", settings);

  const replayed = await runScenario(loaded, {
    artifacts: runDir,
    // The recorded policy, checked again for the run's own cwd when that moved (a fresh workspace).
    ...(policy !== null
      ? { policy: (cwd: string) => cwd === recordedCwd ? policy : recordedPolicy(dir, loaded, cwd)! }
      : {}),
  });
  const fresh = recordedRun(runDir);
  const norm = (text: string) => normalizeText(text, settings.filters.value, settings.redactions.value);
  const differences: ReplayDifference[] = [];
  const compare = (kind: ReplayDifference["kind"], name: string, before: string, after: string) => {
    const diff = unifiedDiff(norm(before), norm(after), [`recorded ${name}`, `replayed ${name}`]);
    if (diff !== "") differences.push({ kind, name, diff });
  };
  for (const name of new Set([...recorded.snapshots.keys(), ...fresh.snapshots.keys()])) {
    const missing = "(no snapshot)\n";
    compare("snapshot", name, recorded.snapshots.get(name) ?? missing, fresh.snapshots.get(name) ?? missing);
  }
  if (recorded.transcript !== null) {
    compare("transcript", "session.cast", recorded.transcript, fresh.transcript ?? "");
  }
  if (recorded.result !== null) {
    compare("result", "run.json", resultText(recorded.result), resultText(replayed));
  }

  const broke = replayed.status === "Error" && recorded.result?.status !== "Error";
  const report: ReplayReport = {
    version: 1,
    status: broke ? "Error" : differences.length === 0 ? "Match" : "Drift",
    bundle: dir,
    replay_run: runDir,
    replay_status: replayed.status,
    replay_error: replayed.error,
    normalization: settings,
    compared: {
      snapshots: recorded.snapshots.size,
      transcript: recorded.transcript !== null,
      result: recorded.result !== null,
    },
    differences: differences.length,
    at: new Date().toISOString(),
  };
  write("replay.json", report);
  if (differences.length > 0) write("diff.json", differences);
  return { report, differences };
}

/**
 * The normalization a replay of `dir` would apply, after the same checks a replay makes first (the
 * bundle's scenario is read and validated; `--require-*` are honoured). Runs nothing.
 */
export function explainReplay(dir: string, options: ReplayOptions = {}): NormalizationSettings {
  return prepare(dir, options).settings;
}

/**
 * What a replay checks and resolves before anything runs: the `--require-*` checks, the recorded scenario,
 * the recorded policy (validated for the recorded cwd) and the normalization settings.
 */
function prepare(dir: string, options: ReplayOptions) {
  if (options.requireChecksums === true) requireChecksums(dir);
  if (options.requireEvents === true) requireEvents(dir);
  const loaded = recordedScenario(dir);
  const recordedCwd = loaded.workspaceDir ?? loaded.scenario.run.cwd ?? loaded.dir;
  const policy = recordedPolicy(dir, loaded, recordedCwd);
  const settings = resolveNormalization(options, loaded.scenario.run.normalize ?? [], policy?.replay ?? null);
  return { loaded, recordedCwd, policy, settings };
}

/** The latest replay of a bundle (`replay/replay.json` and `diff.json`); throws `E_REPLAY_BUNDLE` if none. */
export function latestReplay(dir: string): { report: ReplayReport; differences: ReplayDifference[] } {
  const name = `${REPLAY_DIR}/replay.json`;
  const text = readBundleFile(dir, name);
  if (text === null) throw bundleError(dir, `has not been replayed (no "${name}")`, name);
  const report = ReplayReportSchema.safeParse(parseJson(dir, name, text));
  if (!report.success) throw bundleError(dir, `"${name}" is not a valid replay report`, name);
  const diffName = `${REPLAY_DIR}/diff.json`;
  const diffText = readBundleFile(dir, diffName);
  const differences = z.array(ReplayDifferenceSchema).safeParse(
    diffText === null ? [] : parseJson(dir, diffName, diffText),
  );
  if (!differences.success) throw bundleError(dir, `"${diffName}" is not a valid diff list`, diffName);
  return { report: report.data, differences: differences.data };
}
