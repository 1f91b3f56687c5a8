/**
 * Reading a scenario bundle for replay. Everything recorded is read and validated before anything runs,
 * so a corrupt or hand-edited bundle fails with `E_REPLAY_BUNDLE` naming the file, never a raw parse error.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { z } from "zod";
import { SpecterError } from "../errors.ts";
import { checkPolicyDocument, type Policy } from "../policy/mod.ts";
import type { LoadedScenario } from "../scenario/load.ts";
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

/** A file's text, or null when it does not exist; a symlink or unreadable file is a bundle error. */
export function readBundleFile(dir: string, name: string): string | null {
  const path = join(dir, name);
  try {
    if (!Deno.lstatSync(path).isFile) throw bundleError(dir, `"${name}" is not a regular file`, name);
    return Deno.readTextFileSync(path);
  } catch (error: unknown) {
    if (error instanceof Deno.errors.NotFound) return null;
    if (error instanceof SpecterError) throw error;
    throw bundleError(dir, `"${name}" cannot be read: ${(error as Error).message}`, name);
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
export function recordedScenario(dir: string): RecordedScenario {
  const name = "scenario.resolved.json";
  const text = readBundleFile(dir, name);
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

/**
 * The policy the recorded run enforced (`policy.effective.json`), validated again like any policy file
 * for a run in `cwd`; null when the run ended before launch and wrote none. A scenario with a scratch
 * workspace gets a fresh one (`cwd`): paths in the recorded workspace move there, as `${workspace}` would.
 */
export function recordedPolicy(dir: string, recorded: RecordedScenario, cwd: string): Policy | null {
  const name = "policy.effective.json";
  const text = readBundleFile(dir, name);
  if (text === null) return null;
  const raw = parseJson(dir, name, text);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw bundleError(dir, `"${name}" is not a policy`, name);
  }
  // The effective form has the file form's fields, plus its source and null for "absent" (no ceiling,
  // default normalization).
  const { source: _source, budgets, replay, ...rest } = raw as Record<string, unknown>;
  const run = recorded.scenario.run;
  const old = recorded.workspaceDir;
  if (old !== null) {
    const move = (p: unknown) =>
      typeof p === "string" && (p === old || p.startsWith(`${old}/`)) ? cwd + p.slice(old.length) : p;
    const fs = rest.fs as Record<string, unknown> | undefined;
    if (Array.isArray(rest.exec)) rest.exec = rest.exec.map(move);
    for (const key of ["read", "write"]) {
      if (fs && Array.isArray(fs[key])) fs[key] = (fs[key] as unknown[]).map(move);
    }
  }
  const doc = { ...rest, ...withoutNulls("budgets", budgets), ...withoutNulls("replay", replay) };
  const check = checkPolicyDocument(doc, `file:${join(dir, name)}`, {
    workspace: cwd,
    home: Deno.env.get("HOME") ?? "/",
    acks: { unsafeWrite: run.ack_unsafe_write === true, network: false },
  });
  if (check.policy === null) {
    const first = check.problems[0]!;
    throw bundleError(dir, `"${name}" is not a valid policy: ${first.code}: ${first.message}`, name);
  }
  return check.policy;
}

function recordedSnapshots(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(join(dir, "snapshots"))];
  } catch (error: unknown) {
    if (error instanceof Deno.errors.NotFound) return out; // A scenario without snapshot steps.
    throw bundleError(dir, `"snapshots" cannot be read: ${(error as Error).message}`, "snapshots");
  }
  const names = entries.map((e) => e.name).filter((n) => n.endsWith(".json")).sort();
  for (const file of names) {
    const name = `snapshots/${file}`;
    const parsed = ScreenSnapshotSchema.safeParse(parseJson(dir, name, readBundleFile(dir, name) ?? ""));
    if (!parsed.success) throw bundleError(dir, `"${name}" is not a valid snapshot`, name);
    out.set(file.slice(0, -".json".length), snapshotText(parsed.data));
  }
  return out;
}

function recordedTranscript(dir: string): string | null {
  const name = "session.cast";
  const text = readBundleFile(dir, name);
  if (text === null) return null;
  const cast = castTranscript(text);
  if ("problem" in cast) throw bundleError(dir, `"${name}" ${cast.problem}`, name);
  return cast.text;
}

/** Reads and validates what a bundle recorded (snapshots, transcript, result). */
export function recordedRun(dir: string): RecordedRun {
  const text = readBundleFile(dir, "run.json");
  let result: RecordedResult | null = null;
  if (text !== null) {
    const parsed = RecordedResultSchema.safeParse(parseJson(dir, "run.json", text));
    if (!parsed.success) throw bundleError(dir, `"run.json" is not a valid run result`, "run.json");
    result = parsed.data;
  }
  return { snapshots: recordedSnapshots(dir), transcript: recordedTranscript(dir), result };
}
