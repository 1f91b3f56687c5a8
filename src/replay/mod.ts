/**
 * Comparing runs: normalization filters, unified diffs, and replaying a scenario bundle.
 *
 * @module
 */
export { castTranscript } from "./cast.ts";
export { unifiedDiff } from "./diff.ts";
export {
  FILTER_NAMES,
  type FilterName,
  NORMALIZATION_FILTERS,
  normalizeText,
  parseFilters,
  type Redaction,
} from "./normalize.ts";
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
