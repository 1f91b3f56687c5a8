/**
 * Turns zod's issues for a policy document into policy problems with stable codes and messages that name
 * the field: unknown keys (`E_POLICY_UNKNOWN_KEY`), the version (`E_POLICY_VERSION`) and wrong types or
 * values (`E_POLICY_SCHEMA`).
 *
 * @module
 */
import type { z } from "zod";
import { MAX_DURATION_MS } from "../protocol/mod.ts";
import type { LocatedProblem } from "./document_order.ts";
import { type FieldPath, formatField, valueAt } from "./field_path.ts";
import { FILTER_NAMES } from "./normalize.ts";
import {
  BUDGET_KEYS,
  MAX_NET_RULES,
  NetworkAllowSchema,
  POLICY_VERSION,
  PolicyFileSchema,
} from "./schema.ts";

const PATHS = "an array of absolute paths";
const PATH = "an absolute path (a string)";

/** What each field must be, keyed by its path with array indices written `[]`. */
const EXPECTED: Readonly<Record<string, string>> = {
  "": "a table (object)",
  exec: PATHS,
  "exec[]": PATH,
  fs: 'a table with "read" and "write"',
  "fs.read": PATHS,
  "fs.read[]": PATH,
  "fs.write": PATHS,
  "fs.write[]": PATH,
  env: "an array of environment variable names",
  "env[]": "an environment variable name (letters, digits and _, not starting with a digit)",
  network: '"off", "on" or a table {"allow": [HOST[:PORT], …]}',
  "network.allow": `an array of at most ${MAX_NET_RULES} HOST[:PORT] patterns`,
  "network.allow[]": "a HOST[:PORT] pattern (a string)",
  budgets: "a table of positive integers",
  ...Object.fromEntries(BUDGET_KEYS.map((key) => [`budgets.${key}`, "a positive integer"])),
  "budgets.wall_ms": `a positive integer of at most ${MAX_DURATION_MS} (ms: the longest a timer waits)`,
  replay: 'a table with "normalize" and "redactions"',
  "replay.normalize": `"all", "none" or an array of filter names (${FILTER_NAMES.join(", ")})`,
  "replay.normalize[]": `a filter name (${FILTER_NAMES.join(", ")})`,
  "replay.redactions": 'an array of tables with "pattern" and "replacement"',
  "replay.redactions[]": 'a table with "pattern" and "replacement"',
  "replay.redactions[].pattern": "a valid regular expression (a non-empty string)",
  "replay.redactions[].replacement": "a string",
};

/** The known keys of each table, for the unknown-key message. */
const KNOWN_KEYS: Readonly<Record<string, readonly string[]>> = {
  "": Object.keys(PolicyFileSchema.shape),
  fs: ["read", "write"],
  network: ["allow"],
  budgets: BUDGET_KEYS,
  replay: ["normalize", "redactions"],
  "replay.redactions[]": ["pattern", "replacement"],
};

function kindOf(path: FieldPath): string {
  return path.map((segment, i) => typeof segment === "number" ? "[]" : i === 0 ? segment : `.${segment}`)
    .join("");
}

/** A short description of a value for "got …": strings quoted, tables and arrays by kind. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "string") {
    const text = JSON.stringify(value);
    return text.length > 80 ? `${text.slice(0, 77)}…"` : text;
  }
  if (value === null || typeof value !== "object") return String(value);
  if (Array.isArray(value)) return "an array";
  if (value instanceof Date) return "a date"; // TOML dates and times parse to Date subclasses.
  return "a table";
}

function fieldName(path: FieldPath): string {
  return path.length === 0 ? "The policy" : `Field "${formatField(path)}"`;
}

function unknownKeyProblems(issue: z.core.$ZodIssueUnrecognizedKeys): LocatedProblem[] {
  const known = KNOWN_KEYS[kindOf(issue.path as FieldPath)];
  const where = issue.path.length === 0 ? "" : ` in "${formatField(issue.path as FieldPath)}"`;
  const hint = known === undefined ? "" : ` (known keys${where}: ${known.map((k) => `"${k}"`).join(", ")})`;
  return issue.keys.map((key) => {
    const path: FieldPath = [...(issue.path as FieldPath), key];
    return {
      path,
      problem: {
        code: "E_POLICY_UNKNOWN_KEY",
        field: formatField(path),
        message: `Unknown key "${formatField(path)}"${hint}`,
      },
    };
  });
}

function versionProblem(doc: unknown, path: FieldPath): LocatedProblem {
  const present = typeof doc === "object" && doc !== null && Object.hasOwn(doc, "version");
  const message = present
    ? `Field "version" must be ${POLICY_VERSION}, got ${describeValue(valueAt(doc, path))}`
    : `Field "version" is missing: this Specter reads policy version ${POLICY_VERSION}`;
  return { path, problem: { code: "E_POLICY_VERSION", field: "version", message } };
}

/**
 * zod's issues for `doc`. A `network` table that is not a valid allow list fails the union as a whole;
 * its own issues (an unknown key, a list too long, a rule that is not a string) name the exact field.
 */
function issuesOf(doc: unknown): z.core.$ZodIssue[] {
  const result = PolicyFileSchema.safeParse(doc);
  if (result.success) return [];
  return result.error.issues.flatMap((issue) => {
    const value = valueAt(doc, issue.path as FieldPath);
    // TOML dates and times parse to Date subclasses: a value, not a table.
    const table = typeof value === "object" && value !== null && !Array.isArray(value) &&
      !(value instanceof Date);
    if (issue.code !== "invalid_union" || kindOf(issue.path as FieldPath) !== "network" || !table) {
      return [issue];
    }
    const inner = NetworkAllowSchema.safeParse(value);
    return inner.success
      ? [issue]
      : inner.error.issues.map((own) => ({ ...own, path: [...issue.path, ...own.path] }) as z.core.$ZodIssue);
  });
}

/** Every problem zod finds in `doc` against {@link PolicyFileSchema}, located for ordering. */
export function schemaProblems(doc: unknown): LocatedProblem[] {
  const issues = issuesOf(doc);
  if (issues.length === 0) return [];
  const found: LocatedProblem[] = [];
  for (const issue of issues) {
    const path = issue.path as FieldPath;
    if (issue.code === "unrecognized_keys") {
      found.push(...unknownKeyProblems(issue));
    } else if (path[0] === "version") {
      found.push(versionProblem(doc, path));
    } else {
      const expected = EXPECTED[kindOf(path)];
      const message = expected === undefined
        ? `${fieldName(path)} is invalid: ${issue.message}` // Not reached for the v1 schema; kept as a fallback.
        : `${fieldName(path)} must be ${expected}, got ${describeValue(valueAt(doc, path))}`;
      found.push({ path, problem: { code: "E_POLICY_SCHEMA", field: formatField(path), message } });
    }
  }
  return found;
}
