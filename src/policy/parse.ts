/**
 * Policy text → plain value. JSON or TOML, chosen by the caller (by file extension); the value is then
 * checked by `checkPolicyDocument`.
 *
 * @module
 */
import { parse as parseToml, TomlError } from "smol-toml";
import { PolicyError } from "../errors.ts";
import { WHOLE_DOCUMENT } from "./field_path.ts";

/** The policy file formats. */
export const POLICY_FORMATS = ["json", "toml"] as const;

/** A policy file format. */
export type PolicyFormat = (typeof POLICY_FORMATS)[number];

/** The format of a file named `path` by its extension (case-insensitive), or `null` for any other name. */
export function formatOfPath(path: string): PolicyFormat | null {
  const lower = path.toLowerCase();
  if (lower.endsWith(".json")) return "json";
  if (lower.endsWith(".toml")) return "toml";
  return null;
}

/** The first line of a parser's message without a trailing period (parsers append code frames). */
function firstLine(message: string): string {
  return (message.split("\n")[0] ?? "").trim().replace(/\.$/, "");
}

/**
 * Parses `text` as `format`; `source` (`file:/abs/path`) names it in messages. A leading byte order mark
 * is ignored. Throws `PolicyError` with one `E_POLICY_PARSE` problem (field `(policy)`) when the text is
 * not valid JSON/TOML. Any value is returned, including non-objects: checking is the caller's job.
 */
export function parsePolicyText(text: string, format: PolicyFormat, source: string): unknown {
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  try {
    return format === "json" ? JSON.parse(body) : parseToml(body);
  } catch (error: unknown) {
    const detail = error instanceof TomlError
      ? `${firstLine(error.message)} (line ${error.line}, column ${error.column})`
      : firstLine(error instanceof Error ? error.message : String(error));
    throw new PolicyError([{
      code: "E_POLICY_PARSE",
      field: WHOLE_DOCUMENT,
      message: `The policy "${source}" is not valid ${format.toUpperCase()}: ${detail}`,
    }], { cause: error });
  }
}
