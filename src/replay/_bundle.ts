/**
 * Reading a scenario bundle for replay. Everything recorded is read and validated before anything runs,
 * so a corrupt or hand-edited bundle fails with `E_REPLAY_BUNDLE` naming the file, never a raw parse error.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { z } from "zod";
import { bundleDigest, MAX_BUNDLE_FILE_BYTES } from "../artifacts/bundle.ts";
import { FileError, type FileErrorCode, SpecterError, UsageError } from "../errors.ts";
import { closeFd, fdInfo, fdProcPath, openBeneath, openDirectory, readFileBeneath } from "../fsafe/mod.ts";
import { checkPolicyDocument, type Policy } from "../policy/mod.ts";
import type { LoadedScenario } from "../scenario/load.ts";
import { GOLDENS_DIR } from "../scenario/runner.ts";
import { ScenarioSchema } from "../scenario/schema.ts";
import { ScreenSnapshotSchema, snapshotText } from "../terminal/mod.ts";
import { castTranscript } from "./cast.ts";

/** The parts of `run.json` a replay compares. */
const RecordedResultSchema = z.object({
  status: z.enum(["Passed", "Failed", "Error"]),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  steps: z.array(z.object({ index: z.int().nonnegative(), action: z.string(), status: z.string() }))
    .readonly(),
  exit: z.object({ code: z.int().nullable(), signal: z.string().nullable(), timed_out: z.boolean() })
    .nullable(),
});

/** The parts of a run's result a replay compares. */
export type RecordedResult = z.infer<typeof RecordedResultSchema>;

/** What a bundle recorded, validated. Absent files are `null` (or empty), never guessed. */
export interface RecordedRun {
  /** The snapshot text forms by file name without extension (`001-start`), from the `.json` files. */
  readonly snapshots: ReadonlyMap<string, string>;
  /** The output of `session.cast` as plain text; null without a recording. */
  readonly transcript: string | null;
  /** `run.json`; null when absent. */
  readonly result: RecordedResult | null;
}

/** An `E_REPLAY_BUNDLE` error about `dir`. */
export function bundleError(dir: string, message: string, file?: string): SpecterError {
  return new SpecterError("E_REPLAY_BUNDLE", `Bundle "${dir}": ${message}`, {
    details: { dir, ...(file === undefined ? {} : { file }) },
  });
}

/** Caps by bundle file (bytes); anything else read from a bundle gets {@link MAX_BUNDLE_FILE_BYTES}. */
const CAPS: Readonly<Record<string, number>> = {
  "scenario.resolved.json": 16 * 1024 * 1024,
  "policy.effective.json": 1024 * 1024,
  "run.json": 64 * 1024 * 1024,
};

/** The cap for snapshots and goldens: the largest screen's JSON is a few MiB. */
export const MAX_SNAPSHOT_BYTES = 32 * 1024 * 1024;

/**
 * A bundle directory opened once: every file is resolved beneath this descriptor (relative, no `..`,
 * no symlink in any component), checked and read through one descriptor, regular files only, capped.
 * The directory's own path is the user's (a symlink there is followed once, when it is opened).
 */
export class BundleDir {
  /** The directory as the user named it (for messages). */
  readonly path: string;
  #fd: number;
  #listed: Readonly<Record<string, string>> | null = null;
  #mismatch: (name: string) => void = () => {};

  /** Opens `path` (throws `E_REPLAY_BUNDLE` when it is not a directory). */
  constructor(path: string) {
    this.path = path;
    try {
      this.#fd = openDirectory(path);
    } catch (error: unknown) {
      throw bundleError(path, `is not a readable directory: ${(error as Error).message}`);
    }
  }

  /** The `O_PATH` descriptor of the directory (valid until {@link BundleDir.close}). */
  get fd(): number {
    return this.#fd;
  }

  /**
   * A file's text, or null when it does not exist. A symlink, `..` or absolute path, FIFO, device,
   * directory or over-size file is the `E_PATH_*`/`E_FILE_*` error naming the bundle and the file;
   * invalid UTF-8 is `E_REPLAY_BUNDLE`.
   */
  read(name: string, maxBytes = CAPS[name] ?? MAX_BUNDLE_FILE_BYTES): string | null {
    let bytes: Uint8Array;
    try {
      bytes = readFileBeneath(this.#fd, name, { maxBytes, what: "bundle file" });
    } catch (error: unknown) {
      if (error instanceof FileError && error.code === "E_PATH_NOT_FOUND") return null;
      if (error instanceof FileError) {
        throw new FileError(error.code as FileErrorCode, `Bundle "${this.path}": ${error.message}`, {
          cause: error,
          details: { dir: this.path, file: clip(name) },
        });
      }
      throw error;
    }
    const listed = this.#listed;
    if (listed !== null && (!Object.hasOwn(listed, name) || listed[name] !== bundleDigest(bytes))) {
      this.#mismatch(name);
    }
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw bundleError(this.path, `"${clip(name)}" is not valid UTF-8`, clip(name)); // Where adds nothing.
    }
  }

  /** True when an entry `name` exists (of any kind: it is only looked at, never followed). */
  has(name: string): boolean {
    try {
      closeFd(openBeneath(this.#fd, name, { mode: "handle" }));
      return true;
    } catch (error: unknown) {
      return !(error instanceof FileError && error.code === "E_PATH_NOT_FOUND");
    }
  }

  /**
   * The names in the sub-directory `sub` (no symlink on the way), or null when it does not exist.
   * Entries are only listed here; each is opened with {@link BundleDir.read}, which refuses links.
   */
  list(sub: string): string[] | null {
    let fd: number;
    try {
      fd = openBeneath(this.#fd, sub, { mode: "handle" });
    } catch (error: unknown) {
      if (error instanceof FileError && error.code === "E_PATH_NOT_FOUND") return null;
      throw error;
    }
    try {
      if (fdInfo(fd).kind !== "dir") throw bundleError(this.path, `"${sub}" is not a directory`, sub);
      return [...Deno.readDirSync(fdProcPath(fd))].map((e) => e.name).sort();
    } finally {
      closeFd(fd);
    }
  }

  /**
   * From now on every file read is checked against `listed` (the bundle's checksums) by the digest of
   * the very bytes read: a file swapped after the tree was verified calls `mismatch` with its name.
   */
  vouch(listed: Readonly<Record<string, string>>, mismatch: (name: string) => void): void {
    this.#listed = listed;
    this.#mismatch = mismatch;
  }

  /** Closes the descriptor. */
  close(): void {
    closeFd(this.#fd);
    this.#fd = -1;
  }
}

function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** A file's text from the bundle at `dir`, or null when it does not exist (see {@link BundleDir.read}). */
export function readBundleFile(dir: string, name: string): string | null {
  const bundle = new BundleDir(dir);
  try {
    return bundle.read(name);
  } finally {
    bundle.close();
  }
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
  const raw = parseJson(dir, name, text);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw bundleError(dir, `"${name}" is not a scenario`, name);
  }
  const { source, workspace_dir: workspaceDir, ...rest } = raw as Record<string, unknown>;
  const parsed = ScenarioSchema.safeParse(rest);
  const absolute = (v: unknown): v is string => typeof v === "string" && v.startsWith("/");
  let field: string | null = null;
  if (!parsed.success) field = parsed.error.issues[0]!.path.join(".");
  else if (!absolute(source)) field = "source";
  else if (
    (workspaceDir !== undefined && !absolute(workspaceDir)) ||
    (workspaceDir === undefined) !== (parsed.data.run.workspace === undefined)
  ) field = "workspace_dir";
  if (!parsed.success || field !== null || !absolute(source)) {
    throw bundleError(dir, `"${name}" is not a valid scenario (field "${field}")`, name);
  }
  return {
    scenario: parsed.data,
    path: source,
    dir: dirname(source),
    stepLines: parsed.data.steps.map(() => 0),
    workspaceDir: absolute(workspaceDir) ? workspaceDir : null,
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
  const doc = { ...rest, ...withoutNulls("budgets", budgets), ...withoutNulls("replay", replay) };
  const check = checkPolicyDocument(doc, `file:${join(dir, name)}`, {
    workspace: cwd,
    home: Deno.env.get("HOME") ?? "/",
    acks,
  });
  if (check.policy !== null) return check.policy;
  const missing = check.problems.map((p) => ACK_FLAGS[p.code as keyof typeof ACK_FLAGS]);
  if (missing.every((flag) => flag !== undefined)) {
    const flags = [...new Set(missing)];
    const fs = (typeof rest.fs === "object" && rest.fs !== null ? rest.fs : {}) as Record<string, unknown>;
    const grants = [
      ...(flags.includes("--ack-unsafe-write") ? [`fs.write ${shown(fs.write)}`] : []),
      ...(flags.includes("--ack-network") ? ['network "on"'] : []),
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
    const parsed = RecordedResultSchema.safeParse(parseJson(bundle.path, "run.json", text));
    if (!parsed.success) throw bundleError(bundle.path, `"run.json" is not a valid run result`, "run.json");
    result = parsed.data;
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
