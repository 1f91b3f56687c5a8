/**
 * The fuzz targets: every parser of untrusted input, each with a corpus (from fixtures/ and the built-in
 * documents), a generator of cases (structure-aware mutations, text mutations, random bytes) and an
 * oracle. A case *crashes* when it throws anything but the parser's documented error (a `SpecterError`
 * with one of the listed codes, or a result that reports the problem), or when a property checked by the
 * oracle fails; it *hangs* when it takes longer than the per-case bound.
 *
 * @module
 */
import { parse as parseYaml } from "yaml";
import { stringify as stringifyToml } from "smol-toml";
import { parseDriverLine } from "../../src/protocol/mod.ts";
import { checkPolicyDocument, parsePolicyText, PRESET_DOCUMENTS } from "../../src/policy/mod.ts";
import { castTranscript } from "../../src/replay/cast.ts";
import { parseScenario } from "../../src/scenario/load.ts";
import { encodeKey } from "../../src/session/keys.ts";
import { OutputTail } from "../../src/session/output_tail.ts";
import { plainText } from "../../src/session/plain_text.ts";
import {
  AUDIT_ARCH,
  compileRules,
  compileSeccomp,
  encodeProgram,
  ERRNO,
  type ErrnoName,
  runFilter,
  type SeccompArch,
  type SeccompRule,
  type SyscallName,
  syscallNumber,
  SYSCALLS,
  X32_SYSCALL_BIT,
} from "../../src/sandbox/seccomp/mod.ts";
import * as seccompModule from "../../src/sandbox/seccomp/mod.ts";
import { SECCOMP_RULES } from "../../profiles/seccomp_rules.ts";
import { CsiClamp } from "../../src/terminal/clamp.ts";
import { TerminalModel } from "../../src/terminal/mod.ts";
import { ScreenSnapshotSchema } from "../../src/protocol/mod.ts";
import { randomString } from "./_mutate.ts";
import type { Prng } from "./_prng.ts";
import { Crash, expectTyped, type FuzzTarget, generateJsonish, readFixtures } from "./_common.ts";
import { HTTP_TARGETS } from "./targets_http.ts";
import { DAEMON_TARGETS } from "./targets_daemon.ts";
import { LOG_TARGETS } from "./targets_log.ts";
import { FILE_TARGETS } from "./targets_files.ts";
import { MCP_TARGETS } from "./targets_mcp.ts";
import { NET_TARGETS } from "./targets_net.ts";

export { Crash, type FuzzTarget } from "./_common.ts";

// --- driver input ------------------------------------------------------------------------------------

const DRIVER_CORPUS: readonly Record<string, unknown>[] = [
  { v: 1, type: "input", data: "ls -la\r" },
  { v: 1, type: "input", data: "aGVsbG8=", binary: true },
  { v: 1, type: "key", key: "ctrl-c" },
  { v: 1, type: "key", key: "alt-shift-up" },
  { v: 1, type: "resize", cols: 120, rows: 40 },
  { v: 1, type: "signal", signal: "TSTP" },
  { v: 1, type: "terminate", grace_ms: 500 },
  { v: 1, type: "ping", id: "p-1" },
  { v: 1, type: "snapshot", name: "after", cells: true },
];
const DRIVER_TEXTS = DRIVER_CORPUS.map((m) => JSON.stringify(m));
const DRIVER_TOKENS = [
  '"v":1',
  '"type":',
  '"binary":true',
  "\\u0000",
  "\\ud800",
  '{"a":',
  "[",
  "]",
  "}",
  ",",
  "1e999",
];

const driver: FuzzTarget = {
  name: "driver",
  about: "driver NDJSON lines (parseDriverLine, then key names and base64 as the session decodes them)",
  generate: (rng) => generateJsonish(rng, DRIVER_CORPUS, DRIVER_TEXTS, DRIVER_TOKENS),
  run(line) {
    const message = expectTyped(() => parseDriverLine(line), [
      "E_PROTOCOL",
      "E_PROTOCOL_VERSION",
      "E_PROTOCOL_BASE64",
      "E_RESIZE_RANGE",
    ]);
    if (message?.type === "key") expectTyped(() => encodeKey(message.key), ["E_PROTOCOL"]);
    if (message?.type === "key") {
      expectTyped(() => encodeKey(message.key, { applicationCursor: true }), ["E_PROTOCOL"]);
    }
  },
};

// --- policy ------------------------------------------------------------------------------------------

const POLICY_VALUES = Object.values(PRESET_DOCUMENTS);
const POLICY_TOML = [...readFixtures("fixtures/scenarios", ".toml"), ...POLICY_VALUES.map(safeToml)];
const POLICY_JSON = POLICY_VALUES.map((v) => JSON.stringify(v, null, 2));
const POLICY_TOKENS = [
  '"version": 1',
  "version = 1",
  "[fs]",
  "read = [",
  'write = ["/"]',
  '"${workspace}"',
  '"${home}/.ssh"',
  'network = "on"',
  "[[x]]",
  '"""',
  "'''",
  "= {",
  "1979-05-27T07:32:00Z",
  "inf",
  "nan",
  "0x7fffffffffffffff",
];

function safeToml(value: unknown): string {
  try {
    return stringifyToml(value as Record<string, unknown>);
  } catch {
    return "version = 1\n";
  }
}

const policy: FuzzTarget = {
  name: "policy",
  about: "policy documents as JSON and TOML (parsePolicyText, then checkPolicyDocument)",
  generate(rng) {
    const toml = rng.chance(0.5);
    const text = toml
      ? generateJsonish(rng, POLICY_VALUES, POLICY_TOML, POLICY_TOKENS, safeToml)
      : generateJsonish(rng, POLICY_VALUES, POLICY_JSON, POLICY_TOKENS);
    return (toml ? "toml\n" : "json\n") + text;
  },
  run(input) {
    const newline = input.indexOf("\n");
    const format = input.slice(0, newline) === "toml" ? "toml" : "json";
    const source = `file:/fuzz/policy.${format}`;
    const doc = expectTyped(() => parsePolicyText(input.slice(newline + 1), format, source), [
      "E_POLICY_PARSE",
    ]);
    if (doc === undefined) return;
    for (const acks of [{ unsafeWrite: false, network: false }, { unsafeWrite: true, network: true }]) {
      // Checking reports problems; it never throws.
      const check = checkPolicyDocument(doc, source, {
        workspace: "/tmp/fuzz-workspace",
        home: "/root",
        acks,
      });
      if ((check.policy === null) === (check.problems.length === 0)) {
        throw new Crash("A policy check returned both a policy and problems, or neither");
      }
    }
  },
};

// --- scenario ----------------------------------------------------------------------------------------

const SCENARIO_TEXTS = readFixtures("fixtures/scenarios", ".yaml");
const SCENARIO_VALUES = SCENARIO_TEXTS.map((t) => parseYaml(t) as unknown);
const SCENARIO_TOKENS = [
  "&a ",
  "*a",
  "<<: *a",
  "!!binary ",
  "!!str ",
  "? ",
  "- ",
  ": ",
  "{",
  "[",
  "'",
  '"',
  "|",
  ">-",
  "\n  ",
  "---\n",
  "...\n",
  "%YAML 1.2\n",
  "regex: '(a+)+$'",
  "timeout_ms: 99999999999",
  "wait_for: { text: x }",
  "steps: []",
];

const scenario: FuzzTarget = {
  name: "scenario",
  about: "scenario files as YAML and JSON (parseScenario: YAML parse, alias limits, schema, regexes)",
  generate(rng) {
    const texts = SCENARIO_TEXTS.length > 0
      ? SCENARIO_TEXTS
      : ["version: 1\nname: x\nrun: {argv: [a]}\nsteps: []\n"];
    const values = SCENARIO_VALUES.length > 0 ? SCENARIO_VALUES : [parseYaml(texts[0]!)];
    return generateJsonish(rng, values, texts, SCENARIO_TOKENS, (v) => JSON.stringify(v, null, rng.below(3)));
  },
  run(text) {
    expectTyped(() => parseScenario(text, "/fuzz/scenario.yaml"), ["E_SCENARIO_PARSE", "E_SCENARIO_SCHEMA"]);
  },
};

// --- asciicast reader --------------------------------------------------------------------------------

const CAST_TEXTS = [
  [
    JSON.stringify({ version: 2, width: 80, height: 24, timestamp: 1700000000 }),
    JSON.stringify([0.1, "o", "hello\r\n"]),
    JSON.stringify([0.2, "i", "q"]),
    JSON.stringify([0.3, "o", "\x1b[1;31mred\x1b[0m 50%\r100%\r\n"]),
    JSON.stringify([0.4, "r", "100x30"]),
  ].join("\n") + "\n",
];
const CAST_VALUES: unknown[] = [[0.5, "o", "\x1b]0;title\x07text\r\n"], { version: 2 }];
const CAST_TOKENS = [
  '[0.1,"o","',
  '"]\n',
  "\\r",
  "\\u001b[",
  "\\u001b]",
  "\\r\\n",
  '{"version":2}\n',
  "\n\n",
];

const cast: FuzzTarget = {
  name: "cast",
  about: "asciicast v2 recordings (castTranscript, plain-text reduction of the output events)",
  generate(rng) {
    if (rng.chance(0.3)) {
      // Valid framing, hostile event payloads.
      const events = Array.from(
        { length: 1 + rng.below(20) },
        () => JSON.stringify([rng.below(1000) / 10, rng.pick(["o", "o", "i", "r"]), hostileOutput(rng, 200)]),
      );
      return [JSON.stringify({ version: 2 }), ...events].join("\n");
    }
    return generateJsonish(rng, CAST_VALUES, CAST_TEXTS, CAST_TOKENS);
  },
  run(text) {
    const result = castTranscript(text);
    if ("text" in result && typeof result.text !== "string") throw new Crash("castTranscript gave no text");
    if ("problem" in result && typeof result.problem !== "string") {
      throw new Crash("castTranscript gave no problem");
    }
  },
};

// --- terminal model feed -----------------------------------------------------------------------------

const E = "\x1b[";
const TERMINAL_TOKENS = [
  `${E}2147483647b`,
  `${E}2147483647L`,
  `${E}2147483647M`,
  `${E}2147483647S`,
  `${E}2147483647T`,
  `${E}2147483647I`,
  `${E}2147483647Z`,
  `${E}2147483647@`,
  `${E}2147483647P`,
  `${E}2147483647X`,
  `${E}2147483647;2147483647H`,
  `${E}1;2147483647r`,
  `${E}5;10r`,
  `${E}?1049h`,
  `${E}?1049l`,
  `${E}?6h`,
  `${E}4h`,
  `${E}?7l`,
  `${E}2J`,
  `${E}3J`,
  `${E}?2J`,
  `${E}2K`,
  "\x1bc",
  "\x1b#8",
  "\x1bM",
  "\x1bD",
  "\x1bE",
  "\x1b7",
  "\x1b8",
  `${E}2147483647 @`,
  `${E}2147483647 A`,
  `${E}2147483647'}`,
  `${E}2147483647'~`,
  `${E}38:2:1:2:3m`,
  `${E}${"1;".repeat(40)}m`,
  "\x1b]0;title\x07",
  "\x1b]8;;http://x\x1b\\",
  "\x1bPq#0;2;0;0;0!2147483647~\x1b\\",
  "\x1bP$qm\x1b\\",
  "\x9b5L",
  "\x90",
  "\x9d",
  "\x18",
  "\x1a",
  "\x1b",
  "\r",
  "\n",
  "\t",
  "\b",
  "e\u0301\u0302",
  "\u4e2d",
  "\u{1F600}",
  "\uD800",
  "\u200d",
];

/** Output a hostile program could print: dictionary tokens, text and random code points. */
function hostileOutput(rng: Prng, units: number): string {
  let out = "";
  while (out.length < units) {
    const roll = rng.below(10);
    if (roll < 6) out += rng.pick(TERMINAL_TOKENS);
    else if (roll < 8) out += randomString(rng, 1 + rng.below(20));
    else if (roll < 9) {
      out += `${E}${randomString(rng, rng.below(8)).replace(/[\x40-\x7e]/g, "1")}${
        String.fromCharCode(0x40 + rng.below(0x3f))
      }`;
    } else out += rng.pick(TERMINAL_TOKENS).repeat(1 + rng.below(50));
  }
  return out;
}

/** Longest a chunk of output (≤ 4 KiB) may take to parse at 80×24 before it counts as a hang. */
export const TERMINAL_CHUNK_MS = 1000;

/**
 * One model per worker, reset between cases: creating an emulator costs more than parsing a typical case.
 * The reset (CAN ends a sequence the last case left open, RIS resets the emulator, then the case's size)
 * leaves the state a new model has, which a replayed case (`--case I`, a new worker) starts from.
 */
let sharedModel: TerminalModel | null = null;

/** Case sizes: mostly what a program prints per read on an ordinary screen, sometimes large ones. */
function terminalShape(rng: Prng): { cols: number; rows: number; units: number } {
  const big = rng.chance(0.02);
  return {
    cols: 1 + rng.below(big ? 400 : 120),
    rows: 1 + rng.below(big ? 200 : 50),
    units: 1 + rng.below(rng.chance(0.02) ? 4096 : 256),
  };
}

const terminal: FuzzTarget = {
  name: "terminal",
  about:
    "terminal output into the model (CsiClamp, slices, xterm) and the plain frame path (OutputTail, plainText)",
  generate(rng) {
    const { cols, rows, units } = terminalShape(rng);
    const cut = rng.below(64);
    return `${cols} ${rows} ${cut}\n${hostileOutput(rng, units)}`;
  },
  async run(input) {
    const newline = input.indexOf("\n");
    const [cols, rows, cut] = input.slice(0, newline).split(" ").map(Number) as [number, number, number];
    const output = input.slice(newline + 1);
    const size = { cols, rows };
    // The clamp is the same however the output is split.
    const whole = new CsiClamp().feed(output, size);
    const split = new CsiClamp();
    const at = Math.min(output.length, cut * 7);
    if (split.feed(output.slice(0, at), size) + split.feed(output.slice(at), size) !== whole) {
      throw new Crash(`CsiClamp output depends on where the input is split (at ${at})`);
    }
    const model = sharedModel ??= await TerminalModel.create({ cols, rows });
    const started = performance.now();
    model.write("\x18\x1bc");
    model.resize(cols, rows);
    model.write(output.slice(0, at));
    model.resize(Math.max(1, rows), Math.max(1, cols));
    model.write(output.slice(at));
    await model.settled();
    const took = performance.now() - started;
    // Area-scaled: a bigger screen is more work per sequence, and slices shrink with it.
    const bound = TERMINAL_CHUNK_MS * Math.max(1, (cols * rows) / 1920);
    if (took > bound) throw new Crash(`Parsing ${output.length} units took ${Math.round(took)} ms`);
    // The cell snapshot costs more than most cases: every eighth case (by its input) checks it.
    if (cut % 8 === 0) ScreenSnapshotSchema.parse(model.snapshot({ cells: true }));
    const tail = new OutputTail(24);
    tail.push(output.slice(0, at));
    tail.push(output.slice(at));
    tail.lastLines();
    plainText(output);
  },
};

// --- seccomp compile → interpret ---------------------------------------------------------------------

const ARCHES: readonly SeccompArch[] = ["x86_64", "aarch64"];
const SYSCALL_NAMES = Object.keys(SYSCALLS) as SyscallName[];
const ERRNO_NAMES = Object.keys(ERRNO) as ErrnoName[];
const compiledReal = new Map<string, Uint8Array>();
/** Whether this compiler splits rules between filters (`when`, host IPC open or closed). */
const WHEN_SUPPORTED = "rulesFor" in seccompModule;

/** The options a filter is compiled for (`hostSockets` where the compiler knows it). */
interface FilterOptions {
  readonly network: boolean;
  readonly hostSockets?: boolean;
}

/** The rules of `rules` that belong to the filter for `options`, by the rule table's documented intent. */
function activeRules(rules: readonly SeccompRule[], options: FilterOptions): SeccompRule[] {
  if (!WHEN_SUPPORTED) return [...rules];
  const when = options.network || options.hostSockets === true ? "unix_open" : "unix_closed";
  return rules.filter((rule) => {
    const only = (rule as { readonly when?: string }).when;
    return only === undefined || only === when;
  });
}

/** What the rule table says about one call: the oracle, written from the rules, not from the compiler. */
function intent(
  arch: SeccompArch,
  rules: readonly SeccompRule[],
  dataArch: number,
  nr: number,
  args: bigint[],
) {
  if (dataArch >>> 0 !== AUDIT_ARCH[arch]) return "kill_process";
  const number = nr >>> 0;
  if (arch === "x86_64" && number >= X32_SYSCALL_BIT) return `errno ${ERRNO.EPERM}`;
  const rule = rules.find((r) => syscallNumber(r.syscall, arch) === number);
  if (rule === undefined) return "allow";
  const deny = `errno ${ERRNO[rule.action]}`;
  const condition = rule.condition;
  if (condition === undefined) return deny;
  const low = Number(BigInt.asUintN(32, args[condition.arg] ?? 0n));
  switch (condition.kind) {
    case "any_bit_set":
      return (low & condition.mask.value) !== 0 ? deny : "allow";
    case "equals_any":
      return condition.values.some((v) => v.value >>> 0 === low) ? deny : "allow";
    case "equals_none":
      return condition.values.some((v) => v.value >>> 0 === low) ? "allow" : deny;
  }
}

function randomRules(rng: Prng): SeccompRule[] {
  const rules: SeccompRule[] = [];
  for (let n = rng.below(12); n > 0; n--) {
    const arg = rng.below(6) as 0 | 1 | 2 | 3 | 4 | 5;
    const values = Array.from(
      { length: 1 + rng.below(5) },
      (_, i) => ({ name: `V${i}`, value: rng.u32() >>> rng.below(32) }),
    );
    const kind = rng.below(4);
    // Untyped on purpose: the field exists only where the compiler knows it (WHEN_SUPPORTED).
    const when: Record<string, string> = WHEN_SUPPORTED && rng.chance(0.3)
      ? { when: rng.pick(["unix_open", "unix_closed"]) }
      : {};
    rules.push({
      ...(when as object),
      syscall: rng.pick(SYSCALL_NAMES),
      action: rng.pick(ERRNO_NAMES),
      reason: "fuzz",
      ...(kind === 0
        ? {}
        : kind === 1
        ? { condition: { kind: "any_bit_set", arg, mask: values[0]! } }
        : kind === 2
        ? { condition: { kind: "equals_any", arg, values } }
        : { condition: { kind: "equals_none", arg, values } }),
    });
  }
  return rules;
}

const seccomp: FuzzTarget = {
  name: "seccomp",
  about: "seccomp compile → interpret agreement with the rule table's intent (real table and random tables)",
  generate(rng) {
    const arch = rng.pick(ARCHES);
    const options: FilterOptions = { network: rng.chance(0.5), hostSockets: rng.chance(0.5) };
    const real = rng.chance(0.5);
    const rules = real ? null : randomRules(rng);
    const table: readonly SeccompRule[] = rules ?? SECCOMP_RULES;
    const calls = Array.from({ length: 16 }, () => {
      const rule = table.length > 0 && rng.chance(0.7) ? rng.pick(table) : undefined;
      const ruleNr = rule === undefined ? null : syscallNumber(rule.syscall, arch);
      const nr = ruleNr !== null && ruleNr !== undefined
        ? ruleNr
        : rng.pick([rng.below(500), rng.u32() | 0, X32_SYSCALL_BIT + rng.below(500), -1, 0x7fffffff]);
      const values: number[] = rule?.condition === undefined
        ? []
        : rule.condition.kind === "any_bit_set"
        ? [rule.condition.mask.value]
        : rule.condition.values.map((v) => v.value);
      const args = Array.from({ length: 6 }, () => {
        const base = values.length > 0 && rng.chance(0.6)
          ? BigInt(rng.pick(values) >>> 0)
          : BigInt(rng.u32());
        const high = rng.chance(0.3) ? BigInt(rng.u32()) << 32n : 0n; // The filter sees only the low half.
        return (high | (base + BigInt(rng.below(3)) - 1n)).toString();
      });
      const dataArch = rng.chance(0.9)
        ? AUDIT_ARCH[arch]
        : rng.pick([0x40000003, rng.u32(), AUDIT_ARCH[rng.pick(ARCHES)]]);
      return { nr, args, arch: dataArch };
    });
    return JSON.stringify({ arch, options, rules, calls });
  },
  run(input) {
    const { arch, options, rules, calls } = JSON.parse(input) as {
      arch: SeccompArch;
      options: FilterOptions;
      rules: SeccompRule[] | null;
      calls: { nr: number; args: string[]; arch: number }[];
    };
    let program: Uint8Array;
    if (rules === null) {
      const key = `${arch} ${options.network} ${options.hostSockets}`;
      program = compiledReal.get(key) ?? compileSeccomp(arch, options);
      compiledReal.set(key, program);
    } else {
      try {
        program = encodeProgram(compileRules(arch, rules, options));
      } catch (error: unknown) {
        // Documented refusals: two rules for one syscall, a program the kernel would not load.
        if (error instanceof RangeError) return;
        throw error;
      }
    }
    const table = activeRules(rules ?? SECCOMP_RULES, options);
    for (const call of calls) {
      const args = call.args.map(BigInt);
      const result = runFilter(program, { nr: call.nr, arch: call.arch, args });
      const got = result.action === "errno" ? `errno ${result.errno}` : result.action;
      const want = intent(arch, table, call.arch, call.nr, args);
      if (got !== want) {
        throw new Crash(
          `seccomp ${arch} nr ${call.nr} args ${call.args.join(",")}: filter ${got}, rules ${want}`,
        );
      }
    }
  },
};

/** Every target, in the order `deno task fuzz` runs them. */
export const TARGETS: readonly FuzzTarget[] = [
  driver,
  policy,
  scenario,
  cast,
  terminal,
  seccomp,
  ...HTTP_TARGETS,
  ...DAEMON_TARGETS,
  ...LOG_TARGETS,
  ...FILE_TARGETS,
  ...MCP_TARGETS,
  ...NET_TARGETS,
];
