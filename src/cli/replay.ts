/**
 * `specter replay DIR [flags]` re-runs a scenario bundle and compares it with the recorded run;
 * `specter replay report DIR` prints the latest replay's summary and diff (for CI logs). Exit 0 on a
 * match, 1 on drift, 2 when the bundle is unusable (`E_REPLAY_*`).
 *
 * @module
 */
import { join } from "node:path";
import { SpecterError, UsageError } from "../errors.ts";
import { parseFlags } from "./flags.ts";
import {
  explainReplay,
  latestReplay,
  type NormalizationSettings,
  parseFilters,
  REPLAY_DIR,
  replayBundle,
  type ReplayDifference,
  type ReplayReport,
} from "../replay/mod.ts";

function explain(settings: NormalizationSettings): string {
  const filters = settings.filters.value.length === 0 ? "(none)" : settings.filters.value.join(", ");
  const redactions = settings.redactions.value.length === 0
    ? "(none)"
    : settings.redactions.value.map((r) => `/${r.pattern}/ → "${r.replacement}"`).join(", ");
  return `filters:    ${filters}   [${settings.filters.source}]\n` +
    `redactions: ${redactions}   [${settings.redactions.source}]`;
}

function summary(report: ReplayReport, differences: readonly ReplayDifference[]): string {
  const compared = [
    `${report.compared.snapshots} snapshot(s)`,
    ...(report.compared.transcript ? ["transcript"] : []),
    ...(report.compared.result ? ["result"] : []),
  ].join(", ");
  const head = `replay: ${report.status.toUpperCase()}  ${report.bundle} ` +
    `(compared ${compared}; replayed run ${report.replay_status} at ${report.at})`;
  if (differences.length === 0) return head;
  const body = differences.map((d) => `● ${d.kind} ${d.name}\n${d.diff.trimEnd()}`).join("\n");
  return `${body}\n${head}\n  ${differences.length} difference(s); ` +
    `details in ${join(report.bundle, REPLAY_DIR, "diff.json")}`;
}

/** Prints a replay's outcome; resolves with the exit code (0 match, 1 drift; an Error throws `E_REPLAY_RUN`). */
function finish(
  report: ReplayReport,
  differences: readonly ReplayDifference[],
  json: boolean,
  out: (text: string) => void,
): number {
  out(json ? JSON.stringify({ ...report, diff: differences }) : summary(report, differences));
  if (report.status === "Error") {
    const why = report.replay_error
      ? `${report.replay_error.code}: ${report.replay_error.message}`
      : "unknown";
    throw new SpecterError(
      "E_REPLAY_RUN",
      `The replayed run of "${report.bundle}" could not be carried out: ${why}`,
      {
        details: { dir: report.bundle, cause_code: report.replay_error?.code ?? null },
      },
    );
  }
  return report.status === "Match" ? 0 : 1;
}

/** Runs `specter replay ARGS`; resolves with the exit code. */
export async function replayCommand(args: readonly string[], out: (text: string) => void): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    strict: { type: "boolean" },
    normalize: { type: "string" },
    explain: { type: "boolean" },
    "require-checksums": { type: "boolean" },
    "require-events": { type: "boolean" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  });
  const json = values.json === true;
  if (positionals[0] === "report") {
    const dir = positionals[1];
    const extra = Object.keys(values).find((k) => k !== "json");
    if (extra !== undefined) throw new UsageError(`Flag "--${extra}" does not apply to replay report`);
    if (dir === undefined || positionals.length > 2) {
      throw new UsageError("Usage: specter replay report DIR [--json]");
    }
    const { report, differences } = latestReplay(dir);
    return finish(report, differences, json, out);
  }
  const dir = positionals[0];
  if (dir === undefined || positionals.length > 1) throw new UsageError("Usage: specter replay DIR [flags]");
  if (values.strict === true && values.normalize !== undefined) {
    throw new UsageError(`Flags "--strict" and "--normalize" cannot be combined`);
  }
  // A bad filter list is a usage error whatever the bundle holds, so it is checked before the bundle.
  if (typeof values.normalize === "string") parseFilters(values.normalize);
  const options = {
    ...(values.strict === true ? { strict: true } : {}),
    ...(typeof values.normalize === "string" ? { normalize: values.normalize } : {}),
    requireChecksums: values["require-checksums"] === true,
    requireEvents: values["require-events"] === true,
  };
  if (values.explain === true) {
    const settings = explainReplay(dir, options);
    out(json ? JSON.stringify(settings) : explain(settings));
    return 0;
  }
  const { report, differences } = await replayBundle(dir, options);
  return finish(report, differences, json, out);
}
