/**
 * Choosing a policy for a run: a preset name or a policy file (JSON or TOML), checked against the run's
 * context. The only part of the policy engine that touches the file system.
 *
 * @module
 */
import { resolve } from "node:path";
import { PolicyError, type PolicyProblem } from "../errors.ts";
import { checkPolicyDocument, type PolicyContext } from "./check.ts";
import { WHOLE_DOCUMENT } from "./field_path.ts";
import { formatOfPath, parsePolicyText } from "./parse.ts";
import { isPresetName, PRESET_DOCUMENTS, PRESET_NAMES } from "./presets.ts";
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
 * Never throws for a bad policy: an unknown name or unreadable file is an `E_POLICY_NOT_FOUND` problem, a
 * wrong extension, an oversized file or bad syntax an `E_POLICY_PARSE` problem.
 */
export function readPolicy(spec: string, ctx: PolicyContext): PolicyReading {
  if (isPresetName(spec)) {
    const source = `preset:${spec}`;
    return { ...checkPolicyDocument(PRESET_DOCUMENTS[spec], source, ctx), source };
  }
  const presets = PRESET_NAMES.join(", ");
  if (spec === "") {
    return failed("file:", "E_POLICY_NOT_FOUND", `The policy name is empty (presets: ${presets})`);
  }
  const path = resolve(Deno.cwd(), spec);
  const source = `file:${path}`;
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(path);
  } catch (error: unknown) {
    const why = error instanceof Deno.errors.NotFound ? "no such file" : (error as Error).message;
    return failed(
      source,
      "E_POLICY_NOT_FOUND",
      `The policy "${spec}" is neither a preset (${presets}) nor a file: ${why}`,
    );
  }
  // Only regular files: reading a FIFO or a device could block or never end.
  if (!info.isFile) return failed(source, "E_POLICY_NOT_FOUND", `The policy "${path}" is not a regular file`);
  const format = formatOfPath(path);
  if (format === null) {
    return failed(source, "E_POLICY_PARSE", `The policy file "${path}" must end in ".json" or ".toml"`);
  }
  if (info.size > MAX_POLICY_FILE_BYTES) {
    return failed(
      source,
      "E_POLICY_PARSE",
      `The policy file "${path}" is larger than ${MAX_POLICY_FILE_BYTES} bytes`,
    );
  }
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (error: unknown) {
    return failed(
      source,
      "E_POLICY_NOT_FOUND",
      `The policy file "${path}" cannot be read: ${(error as Error).message}`,
    );
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
