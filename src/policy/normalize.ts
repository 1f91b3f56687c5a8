/**
 * Normalization: what differs between two honest runs of the same program (timestamps, durations, pids,
 * temporary paths, session ids) is replaced by placeholders before comparing transcripts or screens.
 *
 * @module
 */
import { UsageError } from "../errors.ts";

/** The built-in filters, in the order they apply; each is a named regex and its placeholder. */
export const NORMALIZATION_FILTERS = [
  {
    name: "timestamps",
    pattern: /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?/g,
    replacement: "<timestamp>",
  },
  { name: "clock_times", pattern: /\b\d{2}:\d{2}:\d{2}(?:\.\d+)?\b/g, replacement: "<time>" },
  {
    name: "session_ids",
    pattern: /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi,
    replacement: "<id>",
  },
  { name: "temp_paths", pattern: /\/tmp\/[A-Za-z0-9._-]+/g, replacement: "/tmp/<tmp>" },
  { name: "durations", pattern: /\b\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s)\b/g, replacement: "<duration>" },
  { name: "pids", pattern: /\b(pid|PID)([ =:]+)\d+\b/g, replacement: "$1$2<pid>" },
] as const;

/** A filter's name. */
export type FilterName = typeof NORMALIZATION_FILTERS[number]["name"];

/** Every filter's name, in the order they apply. */
export const FILTER_NAMES: readonly FilterName[] = NORMALIZATION_FILTERS.map((f) => f.name);

/**
 * Parses a `--normalize` value: `all`, `none`, or comma-separated filter names. Throws `E_USAGE` naming
 * an unknown filter.
 */
export function parseFilters(spec: string): FilterName[] {
  if (spec === "all") return [...FILTER_NAMES];
  if (spec === "none") return [];
  const names = spec.split(",").map((n) => n.trim());
  const unknown = names.find((n) => !(FILTER_NAMES as readonly string[]).includes(n));
  if (unknown !== undefined) {
    throw new UsageError(
      `Unknown normalization filter "${unknown}" (known: ${FILTER_NAMES.join(", ")}, all, none)`,
    );
  }
  return names as FilterName[];
}

/** A redaction declared by a scenario or the caller. */
export interface Redaction {
  /** A regular expression (global). */
  readonly pattern: string;
  /** What replaces each match. */
  readonly replacement: string;
}

/**
 * Applies the enabled built-in filters (all when `filters` is absent, none when empty), then the extra
 * redactions, to `text`.
 */
export function normalizeText(
  text: string,
  filters: readonly FilterName[] = FILTER_NAMES,
  redactions: readonly Redaction[] = [],
): string {
  let out = text;
  for (const filter of NORMALIZATION_FILTERS) {
    if (filters.includes(filter.name)) out = out.replace(filter.pattern, filter.replacement);
  }
  for (const r of redactions) out = out.replace(new RegExp(r.pattern, "g"), r.replacement);
  return out;
}
