import assert from "node:assert/strict";
import { testPolicy } from "../../policy/_testing.ts";
import type { Policy } from "../../policy/types.ts";
import type { LaunchRequest } from "../plan.ts";
import {
  fuzzPaths,
  HOSTILE_CHARACTERS,
  INJECTIONS,
  mulberry32,
  parseRules,
  type Rule,
  rulesFor,
} from "./_testing.ts";
import { MAX_LITERAL_BYTES, sbplQuote, sbplString } from "./escape.ts";
import { ancestorsOf } from "./paths.ts";
import { seatbeltProfile } from "./profile.ts";
import { readSexps, stringValue } from "./sexp.ts";

const encoder = new TextEncoder();
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
/** Profiles: printable ASCII plus newlines between rules (no tabs, no CR, nothing else). */
const PROFILE_TEXT = /^[\x20-\x7e\n]*$/;

function roundTrip(expression: string): string | null {
  const data = readSexps(expression);
  assert.equal(data.length, 1, `one datum: ${expression}`);
  return stringValue(data[0]!);
}

Deno.test("plain paths are quoted as they are", () => {
  assert.equal(sbplQuote("/usr/lib"), '"/usr/lib"');
  assert.equal(sbplQuote(""), '""');
  assert.equal(sbplQuote("/a b(c);d#e|f'g"), `"/a b(c);d#e|f'g"`);
});

const ESCAPES: readonly [string, string][] = [
  ['"', '"\\""'],
  ["\\", '"\\\\"'],
  ["\n", '"\\x0a"'],
  ["\r", '"\\x0d"'],
  ["\t", '"\\x09"'],
  ["\x01", '"\\x01"'],
  ["\x1b", '"\\x1b"'],
  ["\x7f", '"\\x7f"'],
  ["\u00e9", '"\\xc3\\xa9"'],
  ["\u202e", '"\\xe2\\x80\\xae"'],
  ["\u{1f600}", '"\\xf0\\x9f\\x98\\x80"'],
  ['\\"', '"\\\\\\""'],
  ["\\x41", '"\\\\x41"'],
];

for (const [value, quoted] of ESCAPES) {
  Deno.test(`escapes ${JSON.stringify(value)} as ${quoted} and reads it back`, () => {
    assert.equal(sbplQuote(value), quoted);
    assert.match(quoted, PRINTABLE_ASCII);
    assert.equal(roundTrip(quoted), value);
  });
}

Deno.test("NUL and lone surrogates are refused, never encoded", () => {
  for (const value of ["/a\0b", "\0", "/\ud800", "/\udfff/x"]) {
    for (const encode of [sbplQuote, sbplString]) {
      assert.throws(() => encode(value), { code: "E_SANDBOX_START" }, JSON.stringify(value));
    }
  }
});

Deno.test("a literal holds MAX_LITERAL_BYTES at most; longer values are split with string-append", () => {
  const fits = "x".repeat(MAX_LITERAL_BYTES);
  assert.equal(sbplString(fits), sbplQuote(fits));
  assert.throws(() => sbplQuote(`${fits}x`), { code: "E_SANDBOX_START" });
  const long = `${fits}x`;
  const expression = sbplString(long);
  assert.ok(expression.startsWith('(string-append "'), expression.slice(0, 30));
  assert.equal(roundTrip(expression), long);
});

Deno.test("string-append splits between characters, every part within the limit", () => {
  // A 2-byte character straddling the limit moves whole to the next part.
  const value = `${"x".repeat(MAX_LITERAL_BYTES - 1)}\u00e9${"\u{1f600}".repeat(120)}"\\\n`;
  const expression = sbplString(value);
  const [node] = readSexps(expression);
  assert.ok(node?.type === "list");
  const parts = node.items.slice(1).map((part) => {
    assert.equal(part.type, "string");
    return part.type === "string" ? part.value : "";
  });
  assert.equal(parts[0], "x".repeat(MAX_LITERAL_BYTES - 1));
  for (const part of parts) assert.ok(encoder.encode(part).length <= MAX_LITERAL_BYTES);
  assert.equal(parts.join(""), value);
  assert.match(expression, PRINTABLE_ASCII);
});

Deno.test("random strings of any code point but NUL and lone surrogates survive quoting", () => {
  const random = mulberry32(7);
  for (let n = 0; n < 2000; n++) {
    let value = "";
    const length = Math.floor(random() * 40);
    while (value.length < length) {
      const roll = random();
      const codePoint = roll < 0.4
        ? 1 + Math.floor(random() * 0x7f)
        : roll < 0.8
        ? 0x80 + Math.floor(random() * 0xd780)
        : 0xe000 + Math.floor(random() * (0x110000 - 0xe000));
      value += String.fromCodePoint(codePoint);
    }
    const expression = sbplString(value);
    assert.match(expression, PRINTABLE_ASCII);
    assert.equal(roundTrip(expression), value);
  }
});

// --- The fuzz: hostile paths through whole profiles --------------------------------------------------

/** At least 10,000 paths (the floor), each in every role below. */
const FUZZ_COUNT = 10_000;
const FUZZ_SEED = 0x5eed_cafe;
const PATHS = fuzzPaths(FUZZ_COUNT, FUZZ_SEED);
const PROGRAM = "/bin/zsh";
const BASELINE = "/fuzz-baseline";

interface Role {
  /** The policy and request that put `path` in this role. */
  readonly launch: (path: string) => { policy: Policy; request: LaunchRequest };
  /** The one rule the path must appear in. */
  readonly action: "allow" | "deny";
  readonly operations: readonly string[];
  readonly filter: "literal" | "subpath";
  /** Whether the path is a writable root (then its ancestors get unlink denials). */
  readonly writable: boolean;
}

function request(program = PROGRAM): LaunchRequest {
  return { program, args: [], cwd: "/Users/me/project", env: {} };
}

const ROLES: Readonly<Record<string, Role>> = {
  "fs.write": {
    launch: (path) => ({ policy: testPolicy({ fs: { read: [], write: [path] } }), request: request() }),
    action: "allow",
    operations: ["file-read*", "file-write*"],
    filter: "subpath",
    writable: true,
  },
  "fs.read": {
    launch: (path) => ({ policy: testPolicy({ fs: { read: [path], write: [] } }), request: request() }),
    action: "allow",
    operations: ["file-read*"],
    filter: "subpath",
    writable: false,
  },
  exec: {
    launch: (path) => ({ policy: testPolicy({ exec: [path] }), request: request() }),
    action: "allow",
    operations: ["process-exec", "file-read*"],
    filter: "subpath",
    writable: false,
  },
  program: {
    launch: (path) => ({ policy: testPolicy(), request: request(path) }),
    action: "allow",
    operations: ["process-exec", "file-read*"],
    filter: "literal",
    writable: false,
  },
};

/** Rules that depend on the fuzzed path: its own rule and the rules listing its ancestors. */
function pathDependent(rule: Rule, path: string): boolean {
  return rule.operations.includes("file-read-metadata") || rule.operations.includes("file-write-unlink") ||
    rule.filters.some((filter) => filter.value === path);
}

/**
 * The rules that do not depend on the path, as sorted text: the path's own rule moves with its depth
 * (rules are ordered like bubblewrap's binds), everything else must be exactly the baseline's.
 */
function shapeOf(rules: readonly Rule[], path: string): string {
  return JSON.stringify(
    rules.filter((rule) => !pathDependent(rule, path)).map((rule) => JSON.stringify(rule)).sort(),
  );
}

Deno.test("the fuzz generator is deterministic and covers every hostile class", () => {
  assert.equal(PATHS.length, FUZZ_COUNT);
  assert.equal(new Set(PATHS).size, FUZZ_COUNT, "distinct");
  assert.deepEqual(fuzzPaths(50, FUZZ_SEED), PATHS.slice(0, 50));
  assert.notDeepEqual(fuzzPaths(50, FUZZ_SEED + 1), PATHS.slice(0, 50));
  for (const [name, characters] of Object.entries(HOSTILE_CHARACTERS)) {
    const hits = PATHS.filter((path) => characters.some((c) => path.includes(c))).length;
    assert.ok(hits >= 500, `${name}: ${hits} paths`);
  }
  for (const injection of INJECTIONS) {
    assert.ok(PATHS.filter((path) => path.includes(injection)).length >= 20, injection);
  }
  const lengths = PATHS.map((path) => encoder.encode(path).length);
  assert.ok(lengths.filter((n) => n > MAX_LITERAL_BYTES).length >= 500, "long paths use string-append");
  assert.ok(Math.max(...lengths) >= 900, "some paths are close to PATH_MAX");
});

for (const [name, role] of Object.entries(ROLES)) {
  Deno.test(`fuzz: ${FUZZ_COUNT} hostile paths in ${name}: one ${role.filter} rule each, read back byte for byte`, () => {
    const base = role.launch(BASELINE);
    const baseline = parseRules(seatbeltProfile(base.policy, base.request));
    const baselineShape = shapeOf(baseline, BASELINE);
    for (const path of PATHS) {
      const { policy, request } = role.launch(path);
      const profile = seatbeltProfile(policy, request);
      const where = `path ${JSON.stringify(path)}`;
      if (!PROFILE_TEXT.test(profile)) assert.fail(`${where}: the profile is not printable ASCII`);
      let rules: Rule[];
      try {
        rules = parseRules(profile);
      } catch (error: unknown) {
        assert.fail(`${where}: the profile does not read back: ${(error as Error).message}`);
      }
      // No rule was added, removed or changed outside the path's own rule and its ancestors' lists.
      if (rules.length !== baseline.length) {
        assert.fail(`${where}: ${rules.length} rules, not ${baseline.length}`);
      }
      const shape = shapeOf(rules, path);
      if (shape !== baselineShape) {
        const extra = (JSON.parse(shape) as string[]).filter((rule) => !baselineShape.includes(rule));
        assert.fail(`${where}: the rules around the path changed: ${extra.join(" ")}`);
      }
      // Exactly one filter names the path, in exactly the expected rule.
      const naming = rules.filter((rule) => rule.filters.some((filter) => filter.value === path));
      const filters = naming.flatMap((rule) => rule.filters.filter((filter) => filter.value === path));
      if (naming.length !== 1 || filters.length !== 1) {
        assert.fail(`${where}: named by ${filters.length} filters in ${naming.length} rules`);
      }
      const [own] = naming;
      assert.deepEqual(
        [own!.action, own!.operations, own!.filters.length, filters[0]!.kind],
        [role.action, role.operations, 1, role.filter],
        where,
      );
      // Byte for byte, not merely equal as JS strings.
      assert.deepEqual(encoder.encode(filters[0]!.value!), encoder.encode(path), where);
      // Ancestors: metadata for all of them; unlink denials exactly for a writable root's.
      const ancestors = ancestorsOf(path);
      const metadata = new Set(
        rulesFor(rules, "allow", ["file-read-metadata"]).flatMap((rule) =>
          rule.filters.map((filter) => filter.value)
        ),
      );
      for (const ancestor of ancestors) {
        if (!metadata.has(ancestor)) {
          assert.fail(`${where}: no metadata rule for ${JSON.stringify(ancestor)}`);
        }
      }
      const unlink = rulesFor(rules, "deny", ["file-write-unlink"]).flatMap((rule) =>
        rule.filters.map((filter) => filter.value)
      );
      assert.deepEqual(unlink.sort(), role.writable ? [...ancestors].sort() : [], where);
    }
  });
}
