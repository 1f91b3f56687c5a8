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
import { REPLAY_DIR } from "../artifacts/mod.ts";
import {
  FILTER_NAMES,
  type FilterName,
  normalizeText,
  parseFilters,
  type Policy,
  type Redaction,
  type ReplaySettings,
} from "../policy/mod.ts";
import { SpecterError } from "../errors.ts";
import { closeFd, fdProcPath, makeDirsBeneath, writeFileWhole } from "../fsafe/mod.ts";
import { RegexClock, runScenario, TIMED_OUT } from "../scenario/mod.ts";
import {
  BundleDir,
  bundleError,
  parseJson,
  recordedGoldens,
  recordedPolicy,
  recordedPolicyText,
  type RecordedResult,
  recordedRun,
  recordedScenario,
  recordedSourceOf,
  type ReplayAcks,
} from "./_bundle.ts";
import { checkChecksums, checkEvents, type Fail } from "./_verify.ts";
import { unifiedDiff } from "./diff.ts";

export { REPLAY_DIR };

/** What a replay is asked to do; absent fields take the defaults noted on each. */
export interface ReplayOptions {
  /** Disable every filter and redaction (default false). */
  readonly strict?: boolean;
  /** `all` (default), `none`, or a comma-separated list of filter names. */
  readonly normalize?: string;
  /**
   * Replay a bundle whose checksums or events do not verify (default false: such a bundle is
   * `E_REPLAY_INCOMPLETE`, `E_REPLAY_TAMPERED` or `E_REPLAY_EVENTS` before anything runs). The report
   * then lists what failed and its status is never `Match` (`MatchUnverified` at best). The recorded
   * policy is never relaxed: missing is `E_REPLAY_INCOMPLETE`, not matching its checksum `E_REPLAY_TAMPERED`.
   */
  readonly allowUnverified?: boolean;
  /** The replaying command line's acknowledgements (absent: none given). The bundle's never count. */
  readonly acks?: Partial<ReplayAcks>;
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

/** One check of the bundle that failed but was let through by `--allow-unverified`. */
export const UnverifiedSchema = z.object({
  code: z.string().describe("E_REPLAY_INCOMPLETE, E_REPLAY_TAMPERED or E_REPLAY_EVENTS"),
  message: z.string(),
});

/** The recorded policy a replay enforced, as shown to the user, and the acknowledgements it needed. */
export const ReplayPolicySchema = z.object({
  recorded_source: z.string().describe("The `source` the bundle claims (`preset:…`, `file:…`); not trusted"),
  exec: z.array(z.string()),
  read: z.array(z.string()),
  write: z.array(z.string()),
  sockets: z.array(z.string()),
  network: z.union([z.enum(["off", "on"]), z.object({ allow: z.array(z.string()) })]).describe(
    '"off", "on" or the allow list\'s rules as written',
  ),
  acknowledged: z.array(z.string()).describe(
    "The replaying command line's flags that accepted grants of this policy (`--ack-unsafe-write`, …)",
  ),
});

/** The recorded policy a replay enforced. */
export type ReplayPolicy = z.infer<typeof ReplayPolicySchema>;

/**
 * The summary of one replay (`replay.json`). `Match`: nothing differs after normalization and the bundle
 * verified (checksums and events). `MatchUnverified`: nothing differs, but `--allow-unverified` let a
 * bundle through that did not verify (see `unverified`): never a plain match. `Drift`: something differs
 * (see `diff.json`). `Error`: the replayed run could not be carried out although the recorded one was
 * (for example its program is gone).
 */
export const ReplayReportSchema = z.object({
  version: z.literal(1),
  status: z.enum(["Match", "MatchUnverified", "Drift", "Error"]),
  verified: z.boolean().describe("True when checksums.json matched every file and events.ndjson was valid"),
  unverified: z.array(UnverifiedSchema).describe(
    "The checks `--allow-unverified` let through; empty when verified",
  ),
  policy: ReplayPolicySchema,
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

/** The policy as shown to the user (and in `replay.json`), with the flags that accepted its grants. */
function shownPolicy(recordedSource: string, policy: Policy, acks: ReplayAcks): ReplayPolicy {
  const sockets = [...(policy.fs.sockets ?? [])];
  return {
    recorded_source: recordedSource.length > 200 ? `${recordedSource.slice(0, 200)}…` : recordedSource,
    exec: [...policy.exec],
    read: [...policy.fs.read],
    write: [...policy.fs.write],
    sockets,
    network: typeof policy.network === "string"
      ? policy.network
      : { allow: policy.network.allow.map((rule) => rule.text) },
    acknowledged: [
      ...(policy.fs.write.length > 0 && acks.unsafeWrite ? ["--ack-unsafe-write"] : []),
      ...(policy.network !== "off" && acks.network ? ["--ack-network"] : []),
      ...(sockets.length > 0 && acks.hostSockets ? ["--ack-host-sockets"] : []),
    ],
  };
}

function resultText(result: RecordedResult): string {
  const lines = [`status: ${result.status}`, `error: ${result.error?.code ?? "none"}`];
  for (const s of result.steps) lines.push(`step ${s.index + 1} ${s.action}: ${s.status}`);
  lines.push(`exit: ${JSON.stringify(result.exit)}`);
  return lines.join("\n") + "\n";
}

/**
 * Re-runs a bundle's scenario under the policy it recorded and compares; writes
 * `replay/{normalization,replay,diff}.json` and the new run in `replay/run/`. Before anything runs the
 * bundle is verified (checksums and events: `E_REPLAY_INCOMPLETE`, `E_REPLAY_TAMPERED`, `E_REPLAY_EVENTS`
 * unless `allowUnverified`), every recorded file is read by descriptor and validated (`E_REPLAY_BUNDLE`,
 * `E_PATH_*`, `E_FILE_*`), and the recorded policy is validated again with the caller's acknowledgements
 * only (`E_UNSAFE_ACK_REQUIRED`). The report's status is `Error` when the replayed run could not be
 * carried out although the recorded one was.
 */
export async function replayBundle(
  dir: string,
  options: ReplayOptions = {},
): Promise<{ report: ReplayReport; differences: ReplayDifference[] }> {
  const bundle = new BundleDir(dir);
  try {
    return await replayOpen(bundle, options);
  } finally {
    bundle.close();
  }
}

async function replayOpen(
  bundle: BundleDir,
  options: ReplayOptions,
): Promise<{ report: ReplayReport; differences: ReplayDifference[] }> {
  const prepared = prepare(bundle, options);
  const { loaded } = prepared;
  const recorded = recordedRun(bundle);
  const goldens = recordedGoldens(bundle, loaded);
  try {
    // Through the bundle's descriptor: a `replay` that is a symlink is removed itself, never followed.
    Deno.removeSync(`${fdProcPath(bundle.fd)}/${REPLAY_DIR}`, { recursive: true });
  } catch {
    // No earlier replay: nothing to clear.
  }
  // Made and written beneath the bundle's descriptor, resolved without links: a `replay` swapped for a
  // symlink by whoever else can write the bundle is refused, never written through.
  const outFd = makeDirsBeneath(bundle.fd, REPLAY_DIR);
  // The new run's artifacts by the real path of the directory just made (the bundle's own path may pass
  // through the user's links, which the run's writer would refuse).
  let runDir: string;
  try {
    runDir = join(Deno.readLinkSync(fdProcPath(outFd)), "run");
  } catch (error: unknown) {
    closeFd(outFd);
    throw error;
  }
  const write = (name: string, value: unknown) =>
    writeFileWhole(
      `${fdProcPath(outFd)}/${name}`,
      JSON.stringify(value, null, 2) + "\n",
      "replay report",
      0o644,
    );
  try {
    return await compareRun(bundle, prepared, recorded, goldens, runDir, write);
  } finally {
    closeFd(outFd);
  }
}

/** How long the redactions may take over one text (a snapshot, the transcript, the result). */
export const REDACTION_BUDGET_MS = 2_000;

async function compareRun(
  bundle: BundleDir,
  prepared: ReturnType<typeof prepare>,
  recorded: ReturnType<typeof recordedRun>,
  goldens: ReturnType<typeof recordedGoldens>,
  runDir: string,
  write: (name: string, value: unknown) => void,
): Promise<{ report: ReplayReport; differences: ReplayDifference[] }> {
  const dir = bundle.path;
  const { loaded, settings } = prepared;
  write("normalization.json", settings);

  const replayed = await runScenario(loaded, {
    artifacts: runDir,
    // The recorded policy, checked again (same text, same acknowledgements) for the run's own cwd when
    // that moved (a fresh workspace).
    policy: (cwd: string) => cwd === prepared.recordedCwd ? prepared.policy : prepared.policyFor(cwd),
    replay: { goldens },
  });
  const freshDir = new BundleDir(runDir);
  let fresh: ReturnType<typeof recordedRun>;
  try {
    fresh = recordedRun(freshDir);
  } finally {
    freshDir.close();
  }
  // Redactions come from the bundle's policy or the command line and run over program output: on the
  // regex worker with a deadline, so a backtracking pattern cannot stop the clock.
  const clock = new RegexClock();
  const norm = async (text: string): Promise<string> => {
    const filtered = normalizeText(text, settings.filters.value, []);
    const out = await clock.replace(settings.redactions.value, filtered, REDACTION_BUDGET_MS);
    if (out === TIMED_OUT) {
      throw new SpecterError(
        "E_REPLAY_NORMALIZE",
        `A redaction ran past its ${REDACTION_BUDGET_MS} ms deadline (a backtracking pattern?), so the replay cannot compare`,
        { details: { dir, redactions: settings.redactions.value.map((r) => r.pattern.slice(0, 80)) } },
      );
    }
    return out;
  };
  const differences: ReplayDifference[] = [];
  const compare = async (kind: ReplayDifference["kind"], name: string, before: string, after: string) => {
    const diff = unifiedDiff(await norm(before), await norm(after), [`recorded ${name}`, `replayed ${name}`]);
    if (diff !== "") differences.push({ kind, name, diff });
  };
  try {
    for (const name of new Set([...recorded.snapshots.keys(), ...fresh.snapshots.keys()])) {
      const missing = "(no snapshot)\n";
      await compare(
        "snapshot",
        name,
        recorded.snapshots.get(name) ?? missing,
        fresh.snapshots.get(name) ?? missing,
      );
    }
    if (recorded.transcript !== null) {
      await compare("transcript", "session.cast", recorded.transcript, fresh.transcript ?? "");
    }
    if (recorded.result !== null) {
      await compare("result", "run.json", resultText(recorded.result), resultText(replayed));
    }
  } finally {
    clock.close();
  }

  const broke = replayed.status === "Error" && recorded.result?.status !== "Error";
  const verified = prepared.unverified.length === 0;
  const report: ReplayReport = {
    version: 1,
    status: broke ? "Error" : differences.length > 0 ? "Drift" : verified ? "Match" : "MatchUnverified",
    verified,
    unverified: prepared.unverified,
    policy: prepared.shown,
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

/** What a replay would do, after the checks it makes first; runs nothing. */
export interface ReplayPlan {
  /** The normalization settings. */
  readonly settings: NormalizationSettings;
  /** The recorded policy as validated, with the acknowledgements that accepted it. */
  readonly policy: ReplayPolicy;
  /** The checks `--allow-unverified` let through (empty: the bundle verified). */
  readonly unverified: readonly z.infer<typeof UnverifiedSchema>[];
}

/**
 * The normalization and recorded policy a replay of `dir` would use, after the same checks a replay
 * makes first (verification, every recorded file read and validated, the policy's acknowledgements).
 * Runs nothing.
 */
export function explainReplay(dir: string, options: ReplayOptions = {}): ReplayPlan {
  const bundle = new BundleDir(dir);
  try {
    const prepared = prepare(bundle, options);
    recordedRun(bundle);
    recordedGoldens(bundle, prepared.loaded);
    return { settings: prepared.settings, policy: prepared.shown, unverified: prepared.unverified };
  } finally {
    bundle.close();
  }
}

/**
 * What a replay checks and resolves before anything runs: checksums and events (thrown, or collected
 * under `allowUnverified`), the recorded scenario, the recorded policy (read once, validated for the
 * recorded cwd with the caller's acknowledgements) and the normalization settings.
 */
function prepare(bundle: BundleDir, options: ReplayOptions) {
  const unverified: z.infer<typeof UnverifiedSchema>[] = [];
  const fail: Fail = (code, message) => {
    if (options.allowUnverified !== true) {
      throw new SpecterError(code, message, { details: { dir: bundle.path } });
    }
    if (!unverified.some((u) => u.message === message)) unverified.push({ code, message });
  };
  const scenarioFile = "scenario.resolved.json";
  if (!bundle.has(scenarioFile)) {
    // Not a bundle at all (a scenario's own directory, say): say so before what it lacks besides.
    throw bundleError(bundle.path, `"${scenarioFile}" is missing (not a scenario bundle)`, scenarioFile);
  }
  checkChecksums(bundle, fail);
  checkEvents(bundle, fail);
  const loaded = recordedScenario(bundle);
  const recordedCwd = loaded.workspaceDir ?? loaded.scenario.run.cwd ?? loaded.dir;
  const acks: ReplayAcks = {
    unsafeWrite: options.acks?.unsafeWrite === true,
    network: options.acks?.network === true,
    hostSockets: options.acks?.hostSockets === true,
  };
  // Read once: the fresh workspace's policy is derived from these very bytes, not from a second read.
  const policyText = recordedPolicyText(bundle);
  const policyFor = (cwd: string) => recordedPolicy(bundle.path, policyText, loaded, cwd, acks);
  const policy = policyFor(recordedCwd);
  const settings = resolveNormalization(options, loaded.scenario.run.normalize ?? [], policy.replay);
  const shown = shownPolicy(recordedSourceOf(policyText), policy, acks);
  return { loaded, recordedCwd, policy, policyFor, settings, shown, unverified };
}

/** The latest replay of a bundle (`replay/replay.json` and `diff.json`); throws `E_REPLAY_BUNDLE` if none. */
export function latestReplay(dir: string): { report: ReplayReport; differences: ReplayDifference[] } {
  const bundle = new BundleDir(dir);
  try {
    const name = `${REPLAY_DIR}/replay.json`;
    const text = bundle.read(name);
    if (text === null) throw bundleError(dir, `has not been replayed (no "${name}")`, name);
    const report = ReplayReportSchema.safeParse(parseJson(dir, name, text));
    if (!report.success) throw bundleError(dir, `"${name}" is not a valid replay report`, name);
    const diffName = `${REPLAY_DIR}/diff.json`;
    const diffText = bundle.read(diffName);
    const differences = z.array(ReplayDifferenceSchema).safeParse(
      diffText === null ? [] : parseJson(dir, diffName, diffText),
    );
    if (!differences.success) throw bundleError(dir, `"${diffName}" is not a valid diff list`, diffName);
    return { report: report.data, differences: differences.data };
  } finally {
    bundle.close();
  }
}
