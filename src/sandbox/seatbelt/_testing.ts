/**
 * Test support for the Seatbelt backend: a deterministic PRNG, a generator of hostile paths, and a
 * view of a profile as rules (built on {@link readSexps}) that refuses any form our generator does not
 * write. Not exported from `mod.ts`.
 *
 * @module
 */
import { MAX_PATH_BYTES } from "./paths.ts";
import { readSexps, type Sexp, stringValue, symbolName } from "./sexp.ts";

/** mulberry32: a tiny, fast, seedable PRNG; returns floats in [0, 1). Same seed, same sequence. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Characters that matter to an SBPL reader, a shell or a terminal, and text that is not ASCII. */
export const HOSTILE_CHARACTERS = {
  quote: ['"'],
  parenthesis: ["(", ")"],
  backslash: ["\\"],
  semicolon: [";"],
  newline: ["\n", "\r", "\r\n"],
  control: ["\t", "\x01", "\x1b", "\x7f", "\x08", "\x0b", "\x0c"],
  reader: ["#", "|", "'", "`", ",", "[", "]", "{", "}", " "],
  unicode: [
    "é",
    "ß",
    "中文",
    "😀",
    "\u202e",
    "\u200d",
    "e\u0301",
    "\ufeff",
    "\u2028",
    "\u00a0",
    "Ω",
    "\u{10ffff}",
  ],
} as const;

/** Whole fragments that would inject rules into a naively quoted profile. */
export const INJECTIONS = [
  '")(allow default)("',
  '"))\n(allow file-write* (subpath "',
  '\\"',
  "\\\\",
  "\\x41",
  "\\x",
  "\\",
  "; (allow network*)",
  '#"^.*$"',
  "(string-append",
  "\n(deny default)\n",
  '\\")',
] as const;

const PLAIN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-~+=@%$!&*";
const HOSTILE: readonly string[] = Object.values(HOSTILE_CHARACTERS).flat();
// Top-level names the profile itself uses: a fuzz path must never coincide with one of its own paths.
const RESERVED_FIRST = new Set(["usr", "System", "private", "dev", "bin", "Users"]);
const encoder = new TextEncoder();

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function segment(random: () => number, maxLength: number): string {
  let text = "";
  const length = 1 + Math.floor(random() * maxLength);
  while (text.length < length) {
    const roll = random();
    text += roll < 0.5
      ? pick(random, [...PLAIN])
      : roll < 0.9
      ? pick(random, HOSTILE)
      : pick(random, INJECTIONS);
  }
  // `/` separates segments; `.` and `..` are not normalized; NUL is refused by design (tested apart).
  const clean = text.replaceAll("/", "_").replaceAll("\0", "_");
  return clean === "." || clean === ".." ? `${clean}x` : clean;
}

/**
 * `count` distinct, absolute, normalized paths from `seed`: hostile characters, injection fragments,
 * unicode, and every tenth path long (several hundred bytes up to macOS's limit, so values are split
 * with `string-append`). Never NUL, never a lone surrogate, never a path the profile uses itself.
 */
export function fuzzPaths(count: number, seed: number): string[] {
  const random = mulberry32(seed);
  const paths = new Set<string>();
  while (paths.size < count) {
    const long = paths.size % 10 === 0;
    const segments: string[] = [];
    const wanted = long ? 8 + Math.floor(random() * 40) : 1 + Math.floor(random() * 6);
    for (let i = 0; i < wanted; i++) segments.push(segment(random, long ? 40 : 12));
    let path = `/${segments.join("/")}`;
    // Trim whole segments until the path fits macOS's limit.
    while (encoder.encode(path).length > MAX_PATH_BYTES && segments.length > 1) {
      segments.pop();
      path = `/${segments.join("/")}`;
    }
    if (encoder.encode(path).length > MAX_PATH_BYTES || RESERVED_FIRST.has(segments[0]!)) continue;
    paths.add(path);
  }
  return [...paths];
}

/** One filter of a rule, e.g. `(subpath "/a")`. */
export interface RuleFilter {
  /** `literal`, `subpath`, `regex`, `global-name`, `sysctl-name`, `sysctl-name-prefix` or `target`. */
  readonly kind: string;
  /** The string argument (decoded, `string-append` joined), or `null` for a regex or symbol. */
  readonly value: string | null;
  /** The regex source, for `(regex #"…")`. */
  readonly regex: string | null;
  /** The symbol argument, for `(target same-sandbox)`. */
  readonly symbol: string | null;
}

/** One `(allow|deny OPERATION… FILTER…)` form. */
export interface Rule {
  /** `allow` or `deny`. */
  readonly action: "allow" | "deny";
  /** The operation symbols, in order. */
  readonly operations: readonly string[];
  /** The filters, in order. */
  readonly filters: readonly RuleFilter[];
}

/** The operations our profiles use; any other symbol means the profile is not what we wrote. */
export const KNOWN_OPERATIONS = new Set([
  "default",
  "process-fork",
  "signal",
  "process-info*",
  "sysctl-read",
  "mach-lookup",
  "file-read*",
  "pseudo-tty",
  "file-write*",
  "file-ioctl",
  "file-read-metadata",
  "process-exec",
  "network*",
  "network-outbound",
  "file-write-unlink",
]);

/** The filter kinds our profiles use. */
export const KNOWN_FILTERS = new Set([
  "literal",
  "subpath",
  "regex",
  "global-name",
  "sysctl-name",
  "sysctl-name-prefix",
  "target",
]);

function fail(message: string, node: Sexp): never {
  throw new Error(`${message} at offset ${node.offset}`);
}

function filterOf(node: Sexp): RuleFilter {
  // A network address filter, `(remote ip "HOST:PORT")` or `(local ip …)`: kind "remote ip" or "local ip".
  if (node.type === "list" && node.items.length === 3 && symbolName(node.items[1]) === "ip") {
    const side = symbolName(node.items[0]);
    const value = stringValue(node.items[2]!);
    if ((side !== "remote" && side !== "local") || value === null) {
      fail('An ip filter is (remote ip "…")', node);
    }
    return { kind: `${side} ip`, value, regex: null, symbol: null };
  }
  if (node.type !== "list" || node.items.length !== 2) {
    fail("A filter is a list of a kind and one argument", node);
  }
  const kind = symbolName(node.items[0]);
  if (kind === null || !KNOWN_FILTERS.has(kind)) fail(`Unknown filter ${JSON.stringify(kind)}`, node);
  const argument = node.items[1]!;
  const value = stringValue(argument);
  const regex = argument.type === "regex" ? argument.source : null;
  const symbol = symbolName(argument);
  if (value === null && regex === null && symbol === null) {
    fail("A filter argument must be a string, regex or symbol", node);
  }
  return { kind, value, regex, symbol };
}

/**
 * The rules of `profile`, checking its overall shape on the way: `(version 1)` first, then only
 * `allow`/`deny` forms of known operations followed by known filters. Throws on anything else.
 */
export function parseRules(profile: string): Rule[] {
  const forms = readSexps(profile);
  const [version, ...rest] = forms;
  if (
    version?.type !== "list" || version.items.length !== 2 || symbolName(version.items[0]) !== "version" ||
    version.items[1]?.type !== "number" || version.items[1].value !== 1
  ) {
    throw new Error("The profile must start with (version 1)");
  }
  return rest.map((form) => {
    if (form.type !== "list") fail("A top-level datum must be a rule", form);
    const [head, ...items] = form.items;
    const action = symbolName(head);
    if (action !== "allow" && action !== "deny") fail(`Unknown rule ${JSON.stringify(action)}`, form);
    const operations: string[] = [];
    let i = 0;
    for (; i < items.length && items[i]!.type === "symbol"; i++) {
      const operation = symbolName(items[i])!;
      if (!KNOWN_OPERATIONS.has(operation)) fail(`Unknown operation ${operation}`, items[i]!);
      operations.push(operation);
    }
    if (operations.length === 0) fail("A rule needs an operation", form);
    const filters = items.slice(i).map(filterOf);
    return { action, operations, filters };
  });
}

/** The rules whose action and operations are exactly these. */
export function rulesFor(
  rules: readonly Rule[],
  action: "allow" | "deny",
  operations: readonly string[],
): Rule[] {
  return rules.filter((rule) =>
    rule.action === action && rule.operations.length === operations.length &&
    rule.operations.every((operation, i) => operation === operations[i])
  );
}

/** The string values of the given filter kind across `rules` (e.g. every `subpath`). */
export function filterValues(rules: readonly Rule[], kind: string): string[] {
  return rules.flatMap((rule) =>
    rule.filters.filter((f) => f.kind === kind && f.value !== null).map((f) => f.value!)
  );
}
