/**
 * The policy engine: policy files (JSON/TOML, version 1) and presets, validated with stable error codes
 * into the frozen {@link Policy} every sandbox backend consumes. Pure except reading the policy file.
 *
 * @module
 */
export type { Budgets, NetworkAllow, Policy, ReplaySettings } from "./types.ts";
export { BROAD_ROOTS, type BroadRoot, broadRootReason } from "./broad_roots.ts";
export {
  checkPolicyDocument,
  isValidatedPolicy,
  netRuleProblem,
  type PolicyCheck,
  type PolicyContext,
  withAllowNet,
} from "./check.ts";
export {
  addressAllowed,
  canonicalHost,
  isSpecialAddress,
  matchNetRule,
  type NetRule,
  type NetRuleParse,
  type NetRuleProblem,
  parseNetRule,
} from "./net_allow.ts";
export { BINARY_DIRS, FORBIDDEN_TREES, pathSafetyReason, type PathUse, SYSTEM_TREES } from "./path_safety.ts";
export { loadPolicy, MAX_POLICY_FILE_BYTES, type PolicyReading, readPolicy } from "./load.ts";
export { formatOfPath, parsePolicyText, POLICY_FORMATS, type PolicyFormat } from "./parse.ts";
export { pathFault } from "./path_rules.ts";
export {
  AGENT_DEFAULT_PRESET,
  DEFAULT_PRESET,
  isPresetName,
  PRESET_DOCUMENTS,
  PRESET_NAMES,
  type PresetName,
} from "./presets.ts";
export {
  BUDGET_KEYS,
  ENV_NAME_PATTERN,
  MAX_NET_RULES,
  NETWORK_MODES,
  NetworkAllowSchema,
  POLICY_VERSION,
  type PolicyFile,
  PolicyFileSchema,
  ReplaySettingsSchema,
} from "./schema.ts";
export { VARIABLE_NAMES } from "./variables.ts";
export {
  FILTER_NAMES,
  type FilterName,
  NORMALIZATION_FILTERS,
  normalizeText,
  parseFilters,
  type Redaction,
} from "./normalize.ts";
export { hostHome } from "./home.ts";
