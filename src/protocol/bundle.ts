/**
 * The files of a scenario bundle that Specter defines for the bundle itself: `checksums.json` (the seal)
 * and the envelope of `scenario.resolved.json` (where the scenario came from, and its scratch workspace).
 * Each has one writer and one reader through its schema. The scenario's own fields are the scenario
 * format's (`spec/schema/scenario.schema.json`), checked by `scenario/` when a replay reads them.
 *
 * @module
 */
import { z } from "zod";
import { decodeWith } from "./_decode.ts";
import type { DecodeProblem } from "./results.ts";

/**
 * `checksums.json`: every other file of the bundle by relative path (`/`-separated), with the sha256 (hex)
 * of its bytes, or a marker starting with `!` for an entry that is not a regular file it could read (a
 * marker never equals a digest, so it never verifies).
 */
export const BundleChecksumsSchema = z.record(
  z.string().describe("Path relative to the bundle"),
  z.string().describe("sha256 (hex), or a `!` marker (symlink, special or over-size file)"),
);

/** `checksums.json`: digests by relative path. */
export type BundleChecksums = z.infer<typeof BundleChecksumsSchema>;

/** The one writer of `checksums.json`: validated, then pretty JSON with a final newline. */
export function encodeBundleChecksums(sums: BundleChecksums): string {
  return JSON.stringify(BundleChecksumsSchema.parse(sums), null, 2) + "\n";
}

/** The one reader of `checksums.json` (a problem is a sentence fragment about the file). */
export function decodeBundleChecksums(text: string): { value: BundleChecksums } | DecodeProblem {
  const decoded = decodeWith(BundleChecksumsSchema, text);
  if ("value" in decoded) return decoded;
  if ("json" in decoded) return { problem: "is not valid JSON" };
  return { problem: `is not an object of digests (field "${decoded.field}": ${decoded.message})` };
}

const absolute = z.string().startsWith("/");

/**
 * `scenario.resolved.json`: the scenario as run (defaults applied, `run.cwd` pinned unless it ran in a
 * scratch workspace), plus where it was loaded from and where its workspace was.
 */
export const ResolvedScenarioSchema = z.looseObject({
  source: absolute.describe("The scenario file's absolute path"),
  workspace_dir: absolute.optional().describe(
    "The run's scratch workspace (absolute), when the scenario has `run.workspace`: paths under it in " +
      "policy.effective.json move to a replay's fresh workspace",
  ),
});

/** `scenario.resolved.json`: the scenario's fields plus `source` and `workspace_dir`. */
export type ResolvedScenario = z.infer<typeof ResolvedScenarioSchema>;

/**
 * The one writer of `scenario.resolved.json`: validated, then pretty JSON with a final newline, in the
 * caller's key order (the scenario's fields first, as the scenario file has them).
 */
export function encodeResolvedScenario(scenario: ResolvedScenario): string {
  ResolvedScenarioSchema.parse(scenario);
  return JSON.stringify(scenario, null, 2) + "\n";
}

/**
 * The one reader of `scenario.resolved.json` (a problem is a sentence fragment about the file). The
 * scenario's own fields are left for the scenario format's schema.
 */
export function decodeResolvedScenario(text: string): { value: ResolvedScenario } | DecodeProblem {
  const decoded = decodeWith(ResolvedScenarioSchema, text);
  if ("value" in decoded) return decoded;
  if ("json" in decoded) return { problem: "is not valid JSON" };
  if (decoded.field === "(document)") return { problem: "is not a scenario" };
  return { problem: `is not a valid scenario (field "${decoded.field}")` };
}
