/**
 * `specter replay DIR [flags]` re-runs a scenario bundle and compares it with the recorded run;
 * `specter replay report DIR` prints the latest replay's summary and diff (for CI logs). Exit 0 on a
 * verified match, 1 on drift or an unverified match (`--allow-unverified`), 2 when the bundle is
 * unusable (`E_REPLAY_*`, `E_UNSAFE_ACK_REQUIRED`, `E_PATH_*`, `E_FILE_*`).
 *
 * @module
 */
import { join } from "node:path";
import { SpecterError, UsageError } from "../errors.ts";
import { FILTER_NAMES, parseFilters } from "../policy/mod.ts";
import { parseFlags } from "./flags.ts";
import { type CommandDoc, commandOptions, type FlagTable, HELP_FLAG } from "./flag_table.ts";
import {
  explainReplay,
  latestReplay,
  type NormalizationSettings,
  REPLAY_DIR,
  replayBundle,
  type ReplayDifference,
  type ReplayPlan,
  type ReplayPolicy,
  type ReplayReport,
} from "../replay/mod.ts";

const REPLAY_FLAGS = {
  strict: { type: "boolean", description: "No normalization at all (filters and scenario redactions off)" },
  normalize: {
    type: "string",
    value: "LIST",
    description: `all (default), none, or filters: ${FILTER_NAMES.join(",")}`,
  },
  explain: {
    type: "boolean",
    description: "Print the normalization settings, their sources and the recorded policy; do not replay",
  },
  "ack-unsafe-write": { type: "boolean", description: "Accept the recorded policy's fs.write grants" },
  "ack-network": { type: "boolean", description: 'Accept the recorded policy\'s network "on"' },
  "ack-host-sockets": { type: "boolean", description: "Accept the recorded policy's fs.sockets grants" },
  "allow-unverified": {
    type: "boolean",
    description: "Replay even when checksums or events do not verify (a missing or altered " +
      "policy.effective.json is still refused); the verdict is never a plain MATCH",
  },
  // Checked by default now; still accepted (no effect) so existing CI command lines keep working.
  "require-checksums": {
    type: "boolean",
    description: "Accepted for compatibility; checksums are required by default",
  },
  "require-events": {
    type: "boolean",
    description: "Accepted for compatibility; events are required by default",
  },
  json: { type: "boolean", description: "Print the report (with the diff) as JSON" },
  ...HELP_FLAG,
} as const satisfies FlagTable;

/** `specter replay`'s help. */
export const REPLAY_DOC: CommandDoc = {
  name: "replay",
  usage: ["specter replay DIR [flags]", "specter replay report DIR [--json]"],
  about: `Re-runs the scenario recorded in a bundle (scenario.resolved.json) under the policy it recorded
(policy.effective.json) and compares snapshots, transcript and results with the recording after
normalization. A bundle is untrusted: before anything runs its checksums.json and events.ndjson are
verified, every recorded file is read beneath DIR without following links (regular files, size-capped),
and the recorded policy is validated again and printed on stderr; its write, network and socket grants
must be acknowledged again here (the bundle's own acknowledgements count for nothing). Writes
DIR/replay/normalization.json, replay.json, diff.json (on drift) and the new run's bundle in DIR/replay/run/.
Exit 0 verified match; 1 drift, or MATCH-UNVERIFIED (no difference, but --allow-unverified let an
unverified bundle through); 2 unusable bundle (E_REPLAY_INCOMPLETE, _TAMPERED, _EVENTS, _BUNDLE,
E_PATH_*, E_FILE_*), a grant not acknowledged (E_UNSAFE_ACK_REQUIRED) or a replayed run that could not
start (E_REPLAY_RUN).`,
  groups: [{ title: "Replay flags (report takes only --json)", flags: REPLAY_FLAGS }],
};

/** The recorded policy in one line per part, every bundle-chosen string quoted (escapes visible). */
function policyLines(policy: ReplayPolicy): string {
  const list = (paths: readonly string[]) =>
    paths.length === 0 ? "(none)" : paths.map((p) => JSON.stringify(p)).join(", ");
  const acked = policy.acknowledged.length === 0 ? "" : `   [accepted by ${policy.acknowledged.join(" ")}]`;
  return `replay: recorded policy (claims source ${JSON.stringify(policy.recorded_source)}):\n` +
    `  exec:    ${list(policy.exec)}\n` +
    `  read:    ${list(policy.read)}\n` +
    `  write:   ${list(policy.write)}\n` +
    (policy.sockets.length > 0 ? `  sockets: ${list(policy.sockets)}\n` : "") +
    `  network: ${
      typeof policy.network === "string" ? policy.network : `allow ${list(policy.network.allow)}`
    }${acked}`;
}

/** The checks `--allow-unverified` let through, one line each. */
function unverifiedLines(plan: Pick<ReplayPlan, "unverified">): string[] {
  return plan.unverified.map((u) => `replay: NOT VERIFIED (--allow-unverified): ${u.code}: ${u.message}`);
}

/** How a status is shown: an unverified match is never printed as a plain MATCH. */
function shownStatus(status: ReplayReport["status"]): string {
  return status === "MatchUnverified" ? "MATCH-UNVERIFIED" : status.toUpperCase();
}

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
  const head = `replay: ${shownStatus(report.status)}  ${report.bundle} ` +
    `(compared ${compared}; replayed run ${report.replay_status} at ${report.at})`;
  if (differences.length === 0) return head;
  const body = differences.map((d) => `● ${d.kind} ${d.name}\n${d.diff.trimEnd()}`).join("\n");
  return `${body}\n${head}\n  ${differences.length} difference(s); ` +
    `details in ${join(report.bundle, REPLAY_DIR, "diff.json")}`;
}

/**
 * Prints a replay's outcome; resolves with the exit code (0 verified match, 1 drift or unverified
 * match; an Error throws `E_REPLAY_RUN`).
 */
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
  return report.status === "Match" && report.verified ? 0 : 1;
}

/** Runs `specter replay ARGS`; resolves with the exit code. */
export async function replayCommand(
  args: readonly string[],
  out: (text: string) => void,
  warn: (text: string) => void = () => {},
): Promise<number> {
  const { values, positionals } = parseFlags(args, commandOptions(REPLAY_DOC));
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
  const relaxed = values["allow-unverified"] === true;
  const required = ["require-checksums", "require-events"].find((k) =>
    values[k as keyof typeof values] === true
  );
  if (relaxed && required !== undefined) {
    throw new UsageError(`Flags "--allow-unverified" and "--${required}" cannot be combined`);
  }
  const options = {
    ...(values.strict === true ? { strict: true } : {}),
    ...(typeof values.normalize === "string" ? { normalize: values.normalize } : {}),
    allowUnverified: relaxed,
    acks: {
      unsafeWrite: values["ack-unsafe-write"] === true,
      network: values["ack-network"] === true,
      hostSockets: values["ack-host-sockets"] === true,
    },
  };
  if (values.explain === true) {
    const plan = explainReplay(dir, options);
    for (const line of unverifiedLines(plan)) warn(line);
    out(json ? JSON.stringify(plan.settings) : `${explain(plan.settings)}\n${policyLines(plan.policy)}`);
    return 0;
  }
  const { report, differences } = await replayBundle(dir, options);
  warn(policyLines(report.policy));
  for (const line of unverifiedLines(report)) warn(line);
  return finish(report, differences, json, out);
}
