/**
 * Parsing the command line, and the conversion of the session flags (`session_flags.ts`) shared by
 * `specter run`, `exec` and `verify` into {@link SpawnOptions}.
 *
 * @module
 */
import { isAbsolute } from "node:path";
import { PolicyError, type PolicyProblem, UsageError } from "../errors.ts";
import { didYouMean } from "../protocol/mod.ts";
import type { SandboxOption, SpawnOptions } from "../session/mod.ts";
import {
  DEFAULT_PRESET,
  hostHome,
  loadPolicy,
  type NetRule,
  netRuleProblem,
  parseNetRule,
  type Policy,
  type PresetName,
  withAllowNet,
} from "../policy/mod.ts";
import { parseCount, parseDuration, parseSize } from "./units.ts";
import { type CommandDoc, commandOptions } from "./flag_table.ts";
import { type FlagValues, parseFlags } from "./parse_flags.ts";

// Parsing itself lives apart (`parse_flags.ts`) so that `specter keeper` parses its flag without loading
// the policy layer that the session flags below need.
export { type FlagValues, parseFlags };

/**
 * Parses `args` with the flags of `doc` (a session command's doc holds the session flag groups);
 * everything after `--` is the command.
 */
export function parseCommandLine(
  args: readonly string[],
  doc: CommandDoc,
): { values: FlagValues; command: string[] } {
  const { values, positionals } = parseFlags(args, commandOptions(doc));
  return { values, command: positionals };
}

function text(values: FlagValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}

function list(values: FlagValues, name: string): string[] {
  const value = values[name];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/**
 * Builds spawn options from parsed flags (throws `E_USAGE` / `E_UNSAFE_ACK_REQUIRED`). `defaultPolicy` is
 * the preset used without `--policy` (`run`/`exec`: `strict`; `agent`/`mcp`: `agent`).
 */
export function sessionOptions(
  values: FlagValues,
  command: string[],
  defaultPolicy: PresetName = DEFAULT_PRESET,
): SpawnOptions {
  if (command.length === 0) {
    throw new UsageError('No command given: put it after "--", e.g. specter run -- bash');
  }
  const cwd = text(values, "cwd");
  if (cwd !== undefined && !isAbsolute(cwd)) {
    throw new UsageError(`Flag "--cwd" must be an absolute path, got "${cwd}"`);
  }
  const sandbox = sandboxOption(values, cwd ?? Deno.cwd(), defaultPolicy);
  const env: Record<string, string> = {};
  for (const pair of list(values, "env")) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new UsageError(`Flag "--env" needs NAME=VALUE, got "${pair.split("=")[0]}"`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  const duration = (name: string) => {
    const value = text(values, name);
    return value === undefined ? undefined : parseDuration(value, name);
  };
  const size = (name: string) => {
    const value = text(values, name);
    return value === undefined ? undefined : parseSize(value, name);
  };
  const count = (name: string) => {
    const value = text(values, name);
    return value === undefined ? undefined : parseCount(value, name);
  };
  const record = text(values, "record");
  const options: { -readonly [K in keyof SpawnOptions]: SpawnOptions[K] } = {
    argv: command,
    shell: values.shell === true,
    env,
    sandbox,
    promptRegex: list(values, "prompt-regex"),
    // One session per process: the reader thread's memory is paid once, and it buys output throughput.
    readerThread: true,
  };
  const set = <K extends keyof SpawnOptions>(key: K, value: SpawnOptions[K] | undefined) => {
    if (value !== undefined) options[key] = value;
  };
  set("cwd", cwd);
  set("cols", count("cols"));
  set("rows", count("rows"));
  set("id", text(values, "id"));
  set("title", text(values, "title"));
  set("description", text(values, "description"));
  set("parentAgent", text(values, "parent-agent"));
  set("idleMs", duration("idle"));
  set("timeoutMs", duration("timeout"));
  set("maxOutputBytes", size("max-output"));
  set("bufferBytes", size("buffer"));
  set("overflowTimeoutMs", duration("overflow-timeout"));
  set("terminateGraceMs", duration("grace"));
  set("lastLines", count("last-lines"));
  // Ceilings only ever tighten the policy's budgets (the session takes the smaller of the two).
  const cpu = duration("max-cpu");
  const limits = {
    ...(size("max-memory") === undefined ? {} : { memoryBytes: size("max-memory")! }),
    ...(cpu === undefined ? {} : { cpuSeconds: Math.max(1, Math.ceil(cpu / 1000)) }),
    ...(count("max-procs") === undefined ? {} : { processes: count("max-procs")! }),
    ...(size("max-file-size") === undefined ? {} : { fileSizeBytes: size("max-file-size")! }),
  };
  if (Object.keys(limits).length > 0) options.limits = limits;
  if (record !== undefined) options.record = { path: record, input: values["record-input"] === true };
  return options;
}

/** The sandbox modes `--sandbox` accepts. */
export const SANDBOX_MODES = ["auto", "bwrap", "seatbelt", "external", "none"] as const;

/** Throws `E_UNSAFE_ACK_REQUIRED` naming `what` and the missing acknowledging flags. */
function requireFlags(what: string, flags: readonly string[], values: FlagValues): void {
  const missing = flags.filter((flag) => values[flag] !== true).map((flag) => `--${flag}`);
  if (missing.length > 0) {
    throw new UsageError(`${what} must be acknowledged with ${missing.join(" and ")}`, {
      code: "E_UNSAFE_ACK_REQUIRED",
      details: { what, missing },
    });
  }
}

/**
 * The sandbox a run asks for. Default: `auto` with the `strict` preset. `--unsafe-no-sandbox` alone
 * means `--sandbox none`, which also needs `--ack-no-network-enforcement`; `external` needs
 * `--ack-external-sandbox`. A policy given to a mode that does not enforce it is an error, not ignored.
 */
export function sandboxOption(
  values: FlagValues,
  cwd: string,
  defaultPolicy: PresetName = DEFAULT_PRESET,
): SandboxOption {
  const modeFlag = text(values, "sandbox");
  if (modeFlag !== undefined && !(SANDBOX_MODES as readonly string[]).includes(modeFlag)) {
    throw new UsageError(
      `Flag "--sandbox" must be one of ${SANDBOX_MODES.join(", ")}, got "${modeFlag.slice(0, 80)}"${
        didYouMean(modeFlag, SANDBOX_MODES)
      }`,
    );
  }
  const mode =
    (modeFlag ?? (values["unsafe-no-sandbox"] === true ? "none" : "auto")) as typeof SANDBOX_MODES[number];
  const policyFlag = text(values, "policy") ?? text(values, "sandbox-profile");
  if ((mode === "none" || mode === "external") && policyFlag !== undefined) {
    throw new UsageError(`Flag "--policy" cannot apply with --sandbox ${mode}: nothing would enforce it`);
  }
  const allowNet = allowNetRules(values);
  if ((mode === "none" || mode === "external") && allowNet !== null) {
    throw new UsageError(`Flag "--allow-net" cannot apply with --sandbox ${mode}: nothing would enforce it`);
  }
  switch (mode) {
    case "none":
      requireFlags(`Sandbox mode "${mode}"`, ["unsafe-no-sandbox", "ack-no-network-enforcement"], values);
      return { mode, acknowledge: "unsafe-no-sandbox" };
    case "external":
      requireFlags(`Sandbox mode "${mode}"`, ["ack-external-sandbox"], values);
      return { mode, acknowledge: "external-sandbox" };
    case "auto":
    case "bwrap":
    case "seatbelt": {
      const strictWrite = values["strict-write"] === true;
      if (strictWrite) requireFlags('Flag "--strict-write"', ["ack-unsafe-write"], values);
      const loaded = loadPolicy(policyFlag ?? defaultPolicy, {
        workspace: cwd,
        home: hostHome(),
        acks: {
          unsafeWrite: values["ack-unsafe-write"] === true,
          network: values["ack-network"] === true,
          hostSockets: values["ack-host-sockets"] === true,
        },
      });
      const policy = applyAllowNet(loaded, allowNet);
      return { mode, policy, strictWrite };
    }
    default: {
      const never: never = mode;
      throw new UsageError(`Unknown sandbox mode "${String(never)}"`);
    }
  }
}

/** Most characters of all `--allow-net` values together (256 rules of a long name each). */
const MAX_ALLOW_NET_CHARS = 80_000;

/**
 * The rules `--allow-net` gives (each value a comma-separated list; repeatable), or `null` without the
 * flag. Needs `--ack-network` (`E_UNSAFE_ACK_REQUIRED`, checked first: no pattern is looked at before the
 * network is acknowledged); a bad pattern is a `PolicyError` `E_POLICY_NET_RULE` naming each (exit 2).
 */
export function allowNetRules(values: FlagValues): NetRule[] | null {
  const given = list(values, "allow-net");
  if (given.length === 0) return null;
  requireFlags('Flag "--allow-net"', ["ack-network"], values);
  if (given.reduce((sum, value) => sum + value.length, 0) > MAX_ALLOW_NET_CHARS) {
    throw new UsageError(`Flag "--allow-net" is longer than ${MAX_ALLOW_NET_CHARS} characters in all`);
  }
  const patterns = given.flatMap((value) => value.split(","));
  const problems: PolicyProblem[] = [];
  const rules: NetRule[] = [];
  for (const pattern of patterns) {
    const problem = netRuleProblem(pattern, "--allow-net");
    if (problem !== null) problems.push(problem);
    else rules.push((parseNetRule(pattern) as { rule: NetRule }).rule);
  }
  if (problems.length > 0) throw new PolicyError(problems, { details: { source: "flag --allow-net" } });
  return rules;
}

/** `policy` with the `--allow-net` rules added (`withAllowNet`), or `policy` itself without the flag. */
export function applyAllowNet(policy: Policy, rules: readonly NetRule[] | null): Policy {
  return rules === null ? policy : withAllowNet(policy, rules);
}

/** The loud banner printed to stderr whenever a program runs without a sandbox. */
export const UNSAFE_BANNER = [
  "┌──────────────────────────────────────────────────────────────────────────────┐",
  "│ specter: WARNING: running WITHOUT A SANDBOX (--unsafe-no-sandbox).           │",
  "│ The program has your user's full access to files, network and processes.     │",
  "└──────────────────────────────────────────────────────────────────────────────┘",
].join("\n");
