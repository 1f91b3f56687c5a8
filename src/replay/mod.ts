/**
 * Comparing runs: normalization filters and unified diffs (used by `verify`; `replay` will share them).
 *
 * @module
 */
export { unifiedDiff } from "./diff.ts";
export { type FilterName, NORMALIZATION_FILTERS, normalizeText, type Redaction } from "./normalize.ts";
