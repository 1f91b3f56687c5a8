/**
 * Reading a scenario bundle for replay. Everything recorded is read and validated before anything runs,
 * so a corrupt or hand-edited bundle fails with `E_REPLAY_BUNDLE` naming the file, never a raw parse error.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { SpecterError, UsageError } from "../errors.ts";
import { checkPolicyDocument, hostHome, type Policy } from "../policy/mod.ts";
import { GOLDENS_DIR, type LoadedScenario, ScenarioSchema } from "../scenario/mod.ts";
import { snapshotText } from "../terminal/mod.ts";
import {
  decodeResolvedScenario,
  decodeRunResult,
  type RunResult,
  ScreenSnapshotSchema,
} from "../protocol/mod.ts";
import { castTranscript } from "./cast.ts";
import { type BundleDir, bundleError, clip, MAX_SNAPSHOT_BYTES } from "./_bundle_dir.ts";

export { BundleDir, bundleError, MAX_SNAPSHOT_BYTES, readBundleFile } from "./_bundle_dir.ts";

/** A recorded run's result (`run.json`). */
export type RecordedResult = RunResult;

/** What a bundle recorded, validated. Absent files are `null` (or empty), never guessed. */
export interface RecordedRun {
  /** The snapshot text forms by file name without extension (`001-start`), from the `.json` files. */
  readonly snapshots: ReadonlyMap<string, string>;
  /** The output of `session.cast` as plain text; null without a recording. */
  readonly transcript: string | null;
  /** `run.json`; null when absent. */
  readonly result: RecordedResult | null;
}

/** `{ [key]: table }` without the table's null entries; `{}` when absent; other values as they are. */
function withoutNulls(key: string, table: unknown): Record<string, unknown> {
  if (table === undefined) return {};
  if (typeof table !== "object" || table === null || Array.isArray(table)) return { [key]: table };
  return { [key]: Object.fromEntries(Object.entries(table).filter(([, v]) => v !== null)) };
}

/** Parses a bundle file's JSON text; throws `E_REPLAY_BUNDLE` naming the file when it is not JSON. */
export function parseJson(dir: string, name: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw bundleError(dir, `"${name}" is not valid JSON`, name); // The parser's position adds little.
  }
}

/** A bundle's scenario, ready for the runner, and where its scratch workspace was (null: none). */
export type RecordedScenario = LoadedScenario & { readonly workspaceDir: string | null };

/** The bundle's scenario (`scenario.resolved.json`). */
export function recordedScenario(bundle: BundleDir): RecordedScenario {
  const dir = bundle.path;
  const name = "scenario.resolved.json";
  const text = bundle.read(name);
  if (text === null) throw bundleError(dir, `"${name}" is missing (not a scenario bundle)`, name);
  const decoded = decodeResolvedScenario(text);
  if ("problem" in decoded) throw bundleError(dir, `"${name}" ${decoded.problem}`, name);
  const { source, workspace_dir: workspaceDir, ...rest } = decoded.value;
  const parsed = ScenarioSchema.safeParse(rest);
  if (!parsed.success) {
    const field = parsed.error.issues[0]!.path.join(".");
    throw bundleError(dir, `"${name}" is not a valid scenario (field "${field}")`, name);
  }
  // A scratch workspace is recorded exactly when the scenario has one.
  if ((workspaceDir === undefined) !== (parsed.data.run.workspace === undefined)) {
    throw bundleError(dir, `"${name}" is not a valid scenario (field "workspace_dir")`, name);
  }
  return {
    scenario: parsed.data,
    path: source,
    dir: dirname(source),
    stepLines: parsed.data.steps.map(() => 0),
    workspaceDir: workspaceDir ?? null,
  };
}

/** The acknowledgements of the replaying command line (never the bundle's). */
export interface ReplayAcks {
  /** `--ack-unsafe-write`. */
  readonly unsafeWrite: boolean;
  /** `--ack-network`. */
  readonly network: boolean;
  /** `--ack-host-sockets`. */
  readonly hostSockets: boolean;
}

/** Which flag acknowledges each ack problem code of a policy check. */
const ACK_FLAGS = {
  E_POLICY_WRITE_ACK: "--ack-unsafe-write",
  E_POLICY_NETWORK_ACK: "--ack-network",
  E_POLICY_SOCKET_ACK: "--ack-host-sockets",
} as const;

/** The name of the recorded policy in a bundle. */
export const POLICY_FILE = "policy.effective.json";

/**
 * The text of the recorded policy, read once. Missing: `E_REPLAY_INCOMPLETE`: there is no fallback to
 * the policy the scenario names or to a preset (a run that ended before launch records none).
 */
export function recordedPolicyText(bundle: BundleDir): string {
  const text = bundle.read(POLICY_FILE);
  if (text !== null) return text;
  throw new SpecterError(
    "E_REPLAY_INCOMPLETE",
    `Bundle "${bundle.path}": "${POLICY_FILE}" is missing: without the recorded policy there is nothing ` +
      "to replay under (a run that ended before launch records none)",
    { details: { dir: bundle.path, file: POLICY_FILE } },
  );
}

/** The `source` the recorded policy claims, for display only (`"(none)"` when absent or not a string). */
export function recordedSourceOf(text: string): string {
  try {
    const source = (JSON.parse(text) as { source?: unknown } | null)?.source;
    return typeof source === "string" ? source : "(none)";
  } catch {
    return "(none)"; // Not JSON: recordedPolicy reports that with its own error.
  }
}

/**
 * The recorded policy's `text` (`policy.effective.json`), validated again like any policy file
 * for a run in `cwd`, with the acknowledgements of the replaying command line only (the scenario's
 * `ack_unsafe_write` and anything else in the bundle count for nothing). A write, network or socket grant not acknowledged
 * again: `E_UNSAFE_ACK_REQUIRED` naming the flags. Otherwise invalid: `E_REPLAY_BUNDLE`. A scenario with
 * a scratch workspace gets a fresh one (`cwd`): paths in the recorded workspace move there, as
 * `${workspace}` would.
 */
export function recordedPolicy(
  dir: string,
  text: string,
  recorded: RecordedScenario,
  cwd: string,
  acks: ReplayAcks,
): Policy {
  const name = POLICY_FILE;
  const raw = parseJson(dir, name, text);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw bundleError(dir, `"${name}" is not a policy`, name);
  }
  // The effective form has the file form's fields, plus its source and null for "absent" (no ceiling,
  // default normalization). Anything else (an "acks" key, say) is an unknown key the check refuses.
  const { source: _source, budgets, replay, ...rest } = raw as Record<string, unknown>;
  const old = recorded.workspaceDir;
  if (old !== null) {
    const move = (p: unknown) =>
      typeof p === "string" && (p === old || p.startsWith(`${old}/`)) ? cwd + p.slice(old.length) : p;
    const fs = rest.fs as Record<string, unknown> | undefined;
    if (Array.isArray(rest.exec)) rest.exec = rest.exec.map(move);
    for (const key of ["read", "write", "sockets"]) {
      if (fs && typeof fs === "object" && Array.isArray(fs[key])) fs[key] = (fs[key] as unknown[]).map(move);
    }
  }
  // An allow list is recorded as parsed rules: each is checked again from the text it was written as.
  const network = rest.network as { allow?: unknown } | undefined;
  if (typeof network === "object" && network !== null && Array.isArray(network.allow)) {
    rest.network = {
      ...network,
      allow: network.allow.map((rule: unknown) =>
        typeof rule === "object" && rule !== null && typeof (rule as { text?: unknown }).text === "string"
          ? (rule as { text: string }).text
          : rule
      ),
    };
  }
  const doc = { ...rest, ...withoutNulls("budgets", budgets), ...withoutNulls("replay", replay) };
  const check = checkPolicyDocument(doc, `file:${join(dir, name)}`, {
    workspace: cwd,
    home: hostHome(),
    acks,
  });
  if (check.policy !== null) return check.policy;
  const missing = check.problems.map((p) => ACK_FLAGS[p.code as keyof typeof ACK_FLAGS]);
  if (missing.every((flag) => flag !== undefined)) {
    const flags = [...new Set(missing)];
    const fs = (typeof rest.fs === "object" && rest.fs !== null ? rest.fs : {}) as Record<string, unknown>;
    const grants = [
      ...(flags.includes("--ack-unsafe-write") ? [`fs.write ${shown(fs.write)}`] : []),
      ...(flags.includes("--ack-network") ? [`network ${shown(rest.network)}`] : []),
      ...(flags.includes("--ack-host-sockets") ? [`fs.sockets ${shown(fs.sockets)}`] : []),
    ];
    throw new UsageError(
      `Bundle "${dir}": its recorded policy grants ${grants.join(", ")}; a replay decides trust again ` +
        `(the bundle's own acknowledgements count for nothing): pass ${flags.join(" and ")} to accept`,
      { code: "E_UNSAFE_ACK_REQUIRED", details: { dir, file: name, missing: flags } },
    );
  }
  // A problem other than a missing acknowledgement says what is wrong with the file itself.
  const first = check.problems.find((p) => !Object.hasOwn(ACK_FLAGS, p.code)) ?? check.problems[0]!;
  throw bundleError(dir, `"${name}" is not a valid policy: ${first.code}: ${first.message}`, name);
}

/** A bundle-chosen value for a message: JSON (control characters escaped), clipped. */
function shown(value: unknown): string {
  return clip(JSON.stringify(value) ?? "null");
}

function recordedSnapshots(bundle: BundleDir): Map<string, string> {
  const dir = bundle.path;
  const out = new Map<string, string>();
  const names = (bundle.list("snapshots") ?? []).filter((n) => n.endsWith(".json"));
  for (const file of names) {
    const name = `snapshots/${file}`;
    const text = bundle.read(name, MAX_SNAPSHOT_BYTES);
    const parsed = ScreenSnapshotSchema.safeParse(parseJson(dir, name, text ?? ""));
    if (!parsed.success) throw bundleError(dir, `"${name}" is not a valid snapshot`, name);
    out.set(file.slice(0, -".json".length), snapshotText(parsed.data));
  }
  return out;
}

function recordedTranscript(bundle: BundleDir): string | null {
  const name = "session.cast";
  const text = bundle.read(name);
  if (text === null) return null;
  const cast = castTranscript(text);
  if ("problem" in cast) throw bundleError(bundle.path, `"${name}" ${cast.problem}`, name);
  return cast.text;
}

/** Reads and validates what a bundle recorded (snapshots, transcript, result). */
export function recordedRun(bundle: BundleDir): RecordedRun {
  const text = bundle.read("run.json");
  let result: RecordedResult | null = null;
  if (text !== null) {
    const decoded = decodeRunResult(text);
    if ("problem" in decoded) {
      throw bundleError(
        bundle.path,
        `"run.json" is not a valid run result (${clip(decoded.problem)})`,
        "run.json",
      );
    }
    result = decoded.value;
  }
  return { snapshots: recordedSnapshots(bundle), transcript: recordedTranscript(bundle), result };
}

/**
 * The goldens the recorded run compared with, read from the bundle's own `goldens/` copy (never from
 * the host path the scenario names): by the step's `snapshot_equals` path; null when the bundle has
 * none (the golden did not exist when the run was recorded). Read before anything runs.
 */
export function recordedGoldens(bundle: BundleDir, recorded: RecordedScenario): Map<string, string | null> {
  const out = new Map<string, string | null>();
  for (const step of recorded.scenario.steps) {
    if (!("expect" in step) || !("snapshot_equals" in step.expect)) continue;
    const path = step.expect.snapshot_equals;
    out.set(path, bundle.read(`${GOLDENS_DIR}/${path}`, MAX_SNAPSHOT_BYTES));
  }
  return out;
}
