/**
 * Choosing a policy for a run: a preset name or a policy file (JSON or TOML), checked against the run's
 * context. The only part of the policy engine that touches the file system.
 *
 * @module
 */
import { resolve } from "node:path";
import { FileError, PolicyError, type PolicyProblem } from "../errors.ts";
import { readRegularFile } from "../fsafe/mod.ts";
import { didYouMean } from "../protocol/mod.ts";
import { checkPolicyDocument, type PolicyContext } from "./check.ts";
import { WHOLE_DOCUMENT } from "./field_path.ts";
import { formatOfPath, parsePolicyText } from "./parse.ts";
import { AGENT_DEFAULT_PRESET, isPresetName, PRESET_DOCUMENTS, PRESET_NAMES } from "./presets.ts";
import { pathSafetyReason } from "./path_safety.ts";
import type { Policy } from "./types.ts";

/** Largest policy file read, in bytes. Real policies are a few hundred bytes; this stops accidents early. */
export const MAX_POLICY_FILE_BYTES = 1024 * 1024;

/** The outcome of {@link readPolicy}. */
export interface PolicyReading {
  /** The frozen policy, or `null` when `problems` is not empty. */
  readonly policy: Policy | null;
  /** Every problem, in document order; empty when the policy is valid. */
  readonly problems: PolicyProblem[];
  /** `preset:NAME` or `file:/abs/path` (also when the file could not be read). */
  readonly source: string;
}

function failed(source: string, code: PolicyProblem["code"], message: string): PolicyReading {
  return { policy: null, problems: [{ code, field: WHOLE_DOCUMENT, message }], source };
}

/**
 * Reads and checks the policy `spec`: a preset name (exact; a file with the same name needs a path such as
 * `./strict`), or otherwise the path of a `.json`/`.toml` file, relative to `Deno.cwd()` or absolute.
 * Never throws for a bad policy: an unknown name or missing file is an `E_POLICY_NOT_FOUND` problem; a
 * FIFO, device or directory `E_FILE_TYPE`, a file over {@link MAX_POLICY_FILE_BYTES} `E_FILE_TOO_LARGE`,
 * an unreadable one `E_FILE_READ`; a wrong extension, invalid UTF-8 or bad syntax `E_POLICY_PARSE`.
 */
export function readPolicy(spec: string, ctx: PolicyContext): PolicyReading {
  if (isPresetName(spec)) {
    const source = `preset:${spec}`;
    return { ...checkPolicyDocument(presetDocument(spec, ctx), source, ctx), source };
  }
  const presets = PRESET_NAMES.join(", ");
  if (spec === "") {
    return failed("file:", "E_POLICY_NOT_FOUND", `The policy name is empty (presets: ${presets})`);
  }
  const path = resolve(Deno.cwd(), spec);
  const source = `file:${path}`;
  const format = formatOfPath(path);
  let bytes: Uint8Array;
  try {
    // One descriptor, opened non-blocking, checked (regular file, size) and read: a FIFO or device
    // neither hangs nor streams forever, and nothing can be swapped in between check and read.
    bytes = readRegularFile(path, { maxBytes: MAX_POLICY_FILE_BYTES, what: "policy file" });
  } catch (error: unknown) {
    if (!(error instanceof FileError)) throw error;
    if (error.code === "E_PATH_NOT_FOUND") {
      return failed(
        source,
        "E_POLICY_NOT_FOUND",
        // A bare word near a preset's name is its typo (`basc`), not a file that went missing.
        `The policy "${spec}" is neither a preset (${presets}) nor a file: no such file${
          spec.includes("/") ? "" : didYouMean(spec, PRESET_NAMES)
        }`,
      );
    }
    // A FIFO, device or directory, or a file over the cap, keeps the file's own code; the rest is a read error.
    const code = error.code === "E_FILE_TYPE" || error.code === "E_FILE_TOO_LARGE"
      ? error.code
      : "E_FILE_READ";
    return failed(source, code, error.message);
  }
  if (format === null) {
    return failed(source, "E_POLICY_PARSE", `The policy file "${path}" must end in ".json" or ".toml"`);
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return failed(source, "E_POLICY_PARSE", `The policy file "${path}" is not valid UTF-8`);
  }
  let doc: unknown;
  try {
    doc = parsePolicyText(text, format, source);
  } catch (error: unknown) {
    if (error instanceof PolicyError) return { policy: null, problems: [...error.problems], source };
    throw error;
  }
  return { ...checkPolicyDocument(doc, source, ctx), source };
}

/** Like {@link readPolicy}, but returns the policy or throws a `PolicyError` carrying every problem. */
export function loadPolicy(spec: string, ctx: PolicyContext): Policy {
  const { policy, problems, source } = readPolicy(spec, ctx);
  if (policy === null) throw new PolicyError(problems, { details: { source } });
  return policy;
}

/**
 * The agent preset shows the working directory, except a broad root (`/`, a home, `/tmp`…): an MCP host may
 * start its server anywhere, and the server must still start. Then it shows none; a session needs a
 * `workdir` the policy shows (or is refused with `E_SPAWN_CWD`, never moved elsewhere). Every other preset
 * refuses a broad working directory (`E_POLICY_BROAD_ROOT`), as a policy file does.
 */
function presetDocument(name: keyof typeof PRESET_DOCUMENTS, ctx: PolicyContext): unknown {
  const doc = PRESET_DOCUMENTS[name] as Record<string, unknown>;
  if (name !== AGENT_DEFAULT_PRESET || pathSafetyReason(ctx.workspace, "read", ctx.home) === null) return doc;
  const fs = (doc as { fs: { read: string[] } }).fs;
  return { ...doc, fs: { ...fs, read: fs.read.filter((path) => path !== "${workspace}") } };
}
