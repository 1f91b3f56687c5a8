/**
 * Comparing runs: unified diffs and replaying a scenario bundle (normalization filters are in `policy/`).
 *
 * @module
 */
export { castTranscript } from "./cast.ts";
export { unifiedDiff } from "./diff.ts";
export {
  explainReplay,
  latestReplay,
  type NormalizationSettings,
  NormalizationSettingsSchema,
  REPLAY_DIR,
  replayBundle,
  type ReplayDifference,
  ReplayDifferenceSchema,
  type ReplayOptions,
  type ReplayPlan,
  type ReplayPolicy,
  ReplayPolicySchema,
  type ReplayReport,
  ReplayReportSchema,
  resolveNormalization,
} from "./replay.ts";
