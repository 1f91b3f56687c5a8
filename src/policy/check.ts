/**
 * Validation of a parsed policy document into the frozen {@link Policy}: shape (zod), variables, path
 * rules, broad roots and acknowledgements. Every problem is collected, in document order; a policy is
 * produced only when there is none.
 *
 * @module
 */
import { type PolicyProblem, UsageError } from "../errors.ts";
import { stripTrailingSlashes } from "./broad_roots.ts";
import { pathSafetyReason, type PathUse } from "./path_safety.ts";
import { inDocumentOrder, type LocatedProblem } from "./document_order.ts";
import { type FieldPath, formatField, valueAt } from "./field_path.ts";
import { deepFreeze } from "./freeze.ts";
import { type PathFault, pathFault } from "./path_rules.ts";
import { FILTER_NAMES } from "./normalize.ts";
import { type NetRule, parseNetRule } from "./net_allow.ts";
import { MAX_NET_RULES, PolicyFileSchema } from "./schema.ts";
import { schemaProblems } from "./schema_problems.ts";
import type { Policy } from "./types.ts";
import { expandVariables, VARIABLE_NAMES, type VariableName, type VariableValues } from "./variables.ts";

/** What a policy is checked against: the run's directories and the caller's acknowledgements. */
export interface PolicyContext {
  /** The run's working directory (`--cwd`), the value of `${workspace}`; must be absolute and normalized. */
  readonly workspace: string;
  /** The caller's home directory (`HOME`), the value of `${home}`. Empty: unknown, `${home}` is rejected. */
  readonly home: string;
  /** Acknowledgements given on the command line; `false` means not given. */
  readonly acks: {
    /** `--ack-unsafe-write`: a non-empty `fs.write` is accepted. */
    readonly unsafeWrite: boolean;
    /** `--ack-network`: `network: "on"` or an allow list is accepted. */
    readonly network: boolean;
    /** `--ack-host-sockets`: a non-empty `fs.sockets` is accepted. Absent: not given. */
    readonly hostSockets?: boolean;
  };
}

/** The outcome of a check: a policy when there is no problem, otherwise `null` and every problem. */
export interface PolicyCheck {
  /** The frozen policy, or `null` when `problems` is not empty. */
  readonly policy: Policy | null;
  /** Every problem, in document order; empty when the policy is valid. */
  readonly problems: PolicyProblem[];
}

/** How each path list is used (see `path_safety.ts` for the rules of each use). */
type PathListKind = PathUse;

const PATH_LISTS: readonly { path: FieldPath; kind: PathListKind }[] = [
  { path: ["exec"], kind: "exec" },
  { path: ["fs", "read"], kind: "read" },
  { path: ["fs", "write"], kind: "write" },
  { path: ["fs", "sockets"], kind: "socket" },
];

/** Why a variable's value cannot be used in a path: the code and a phrase completing "… uses X but". */
interface VariableFault {
  readonly code: PathFault["code"];
  readonly text: string;
}

interface Variables {
  readonly values: VariableValues;
  /** The faults of the variables whose value cannot be used in a path; absent when it can. */
  readonly faults: Partial<Record<VariableName, VariableFault>>;
  /** The home directory without trailing slashes (empty when unknown). */
  readonly home: string;
}

function variablesOf(ctx: PolicyContext): Variables {
  const home = stripTrailingSlashes(ctx.home);
  const faults: Partial<Record<VariableName, VariableFault>> = {};
  const workspaceFault = pathFault(ctx.workspace);
  if (workspaceFault !== null) {
    faults.workspace = {
      code: workspaceFault.code,
      text: `the working directory ${JSON.stringify(ctx.workspace)} ${workspaceFault.reason}`,
    };
  }
  // An empty HOME would turn "${home}/.ssh" into "/.ssh": never expand it.
  const homeFault = home === "" ? null : pathFault(home);
  if (home === "") faults.home = { code: "E_POLICY_PATH_RELATIVE", text: "HOME is empty or not set" };
  else if (homeFault !== null) {
    faults.home = {
      code: homeFault.code,
      text: `the home directory ${JSON.stringify(ctx.home)} ${homeFault.reason}`,
    };
  }
  return { values: { workspace: ctx.workspace, home }, faults, home };
}

function problemAt(path: FieldPath, code: PolicyProblem["code"], message: string): LocatedProblem {
  return { path, problem: { code, field: formatField(path), message } };
}

/** The first problem of one path entry (unknown variable, unusable variable, shape, broad root), or null. */
function pathEntryProblem(
  raw: string,
  path: FieldPath,
  kind: PathListKind,
  vars: Variables,
): LocatedProblem | null {
  const name = `Field "${formatField(path)}"`;
  const expansion = expandVariables(raw, vars.values);
  if (expansion.unknown.length > 0) {
    const known = VARIABLE_NAMES.map((v) => `"\${${v}}"`).join(", ");
    return problemAt(
      path,
      "E_POLICY_SCHEMA",
      `${name} uses the unknown variable "${expansion.unknown[0]}" (known: ${known})`,
    );
  }
  for (const variable of expansion.used) {
    const fault = vars.faults[variable];
    if (fault !== undefined) {
      return problemAt(path, fault.code, `${name} uses "\${${variable}}" but ${fault.text}`);
    }
  }
  const value = expansion.value;
  const written = value === raw ? "" : ` (written "${raw}")`;
  const fault = pathFault(value);
  if (fault !== null) {
    return problemAt(path, fault.code, `${name} ${fault.reason}, got ${JSON.stringify(value)}${written}`);
  }
  const broad = pathSafetyReason(value, kind, vars.home);
  if (broad !== null) {
    return problemAt(path, "E_POLICY_BROAD_ROOT", `${name} ${broad}${written}: allow a narrower path`);
  }
  return null;
}

function pathProblems(doc: unknown, vars: Variables): LocatedProblem[] {
  const found: LocatedProblem[] = [];
  for (const { path, kind } of PATH_LISTS) {
    const list = valueAt(doc, path);
    if (!Array.isArray(list)) continue; // A wrong type is a schema problem, reported once.
    list.forEach((entry: unknown, i) => {
      if (typeof entry !== "string") return;
      const problem = pathEntryProblem(entry, [...path, i], kind, vars);
      if (problem !== null) found.push(problem);
    });
  }
  return found;
}

function ackProblems(doc: unknown, acks: PolicyContext["acks"]): LocatedProblem[] {
  const found: LocatedProblem[] = [];
  const write = valueAt(doc, ["fs", "write"]);
  if (Array.isArray(write) && write.length > 0 && !acks.unsafeWrite) {
    found.push(problemAt(
      ["fs", "write"],
      "E_POLICY_WRITE_ACK",
      `Field "fs.write" allows host writes (${write.length} path(s)): pass --ack-unsafe-write to accept`,
    ));
  }
  const network = valueAt(doc, ["network"]);
  if (network === "on" && !acks.network) {
    found.push(problemAt(
      ["network"],
      "E_POLICY_NETWORK_ACK",
      'Field "network" is "on": pass --ack-network to accept network access',
    ));
  }
  const allow = valueAt(doc, ["network", "allow"]);
  if (Array.isArray(allow) && allow.length > 0 && !acks.network) {
    found.push(problemAt(
      ["network"],
      "E_POLICY_NETWORK_ACK",
      `Field "network" allows ${allow.length} host pattern(s) through Specter's proxy: pass --ack-network ` +
        "to accept network access",
    ));
  }
  const sockets = valueAt(doc, ["fs", "sockets"]);
  if (Array.isArray(sockets) && sockets.length > 0 && acks.hostSockets !== true) {
    found.push(problemAt(
      ["fs", "sockets"],
      "E_POLICY_SOCKET_ACK",
      `Field "fs.sockets" grants ${sockets.length} host unix socket(s), and with them unix sockets in ` +
        "general: pass --ack-host-sockets to accept",
    ));
  }
  return found;
}

/**
 * The problem of one allow-list pattern at `field` (a document path such as `network.allow[0]`, or a flag
 * such as `--allow-net`), or null: `E_POLICY_NET_RULE` with `parseNetRule`'s reason.
 */
export function netRuleProblem(pattern: string, field: string): PolicyProblem | null {
  const parsed = parseNetRule(pattern);
  if (parsed.ok) return null;
  const name = field.startsWith("--") ? `Flag "${field}"` : `Field "${field}"`;
  const reason = parsed.message.replace(/^Network rule/, "network rule");
  return { code: "E_POLICY_NET_RULE", field, message: `${name} is refused: ${reason}` };
}

function netProblems(doc: unknown): LocatedProblem[] {
  const allow = valueAt(doc, ["network", "allow"]);
  if (!Array.isArray(allow)) return []; // Absent, or a wrong type: a schema problem.
  if (allow.length === 0) {
    return [problemAt(
      ["network", "allow"],
      "E_POLICY_NET_EMPTY",
      'Field "network.allow" is empty: name the hosts to allow, or write "network": "off" for none',
    )];
  }
  const found: LocatedProblem[] = [];
  allow.forEach((entry: unknown, i) => {
    if (typeof entry !== "string") return; // A schema problem.
    const path: FieldPath = ["network", "allow", i];
    const problem = netRuleProblem(entry, formatField(path));
    if (problem !== null) found.push({ path, problem });
  });
  return found;
}

// Policies that came out of validation; `spawn` refuses any other (a hand-built object could grant `/`).
const VALIDATED = new WeakSet<Policy>();

/** True when `policy` was produced by {@link checkPolicyDocument} (directly or through `loadPolicy`). */
export function isValidatedPolicy(policy: Policy): boolean {
  return VALIDATED.has(policy);
}

function workspaceProblems(workspace: string): LocatedProblem[] {
  const fault = pathFault(workspace);
  if (fault === null) return [];
  // Not a field of the document: the empty path sorts it before every document problem.
  return [{
    path: [],
    problem: {
      code: fault.code,
      field: "cwd",
      message: `Field "cwd" (the run's working directory) ${fault.reason}, got ${JSON.stringify(workspace)}`,
    },
  }];
}

/**
 * Validates `doc` (a parsed JSON/TOML value) as a version 1 policy from `source` (`preset:NAME` or
 * `file:/abs/path`) under `ctx`. Pure. Returns the deep-frozen policy when there is no problem, otherwise
 * `policy: null` and every problem in document order (workspace problems first).
 */
export function checkPolicyDocument(doc: unknown, source: string, ctx: PolicyContext): PolicyCheck {
  const vars = variablesOf(ctx);
  const problems = inDocumentOrder(doc, [
    ...workspaceProblems(ctx.workspace),
    ...schemaProblems(doc),
    ...pathProblems(doc, vars),
    ...netProblems(doc),
    ...ackProblems(doc, ctx.acks),
  ]);
  if (problems.length > 0) return { policy: null, problems };
  const file = PolicyFileSchema.parse(doc);
  const expand = (path: string): string => expandVariables(path, vars.values).value;
  const policy: Policy = {
    version: 1,
    source,
    exec: (file.exec ?? []).map(expand),
    fs: {
      read: (file.fs?.read ?? []).map(expand),
      write: (file.fs?.write ?? []).map(expand),
      // Only present when granted, so the policies (and fingerprints) of every other run are unchanged.
      ...((file.fs?.sockets ?? []).length > 0 ? { sockets: file.fs!.sockets!.map(expand) } : {}),
    },
    env: [...(file.env ?? [])],
    network: typeof file.network === "object"
      ? { allow: file.network.allow.map((pattern) => (parseNetRule(pattern) as { rule: NetRule }).rule) }
      : file.network ?? "off",
    budgets: {
      wall_ms: file.budgets?.wall_ms ?? null,
      cpu_seconds: file.budgets?.cpu_seconds ?? null,
      memory_bytes: file.budgets?.memory_bytes ?? null,
      processes: file.budgets?.processes ?? null,
      output_bytes: file.budgets?.output_bytes ?? null,
      file_size_bytes: file.budgets?.file_size_bytes ?? null,
    },
    replay: {
      normalize: file.replay?.normalize === undefined
        ? null
        : file.replay.normalize === "all"
        ? [...FILTER_NAMES]
        : file.replay.normalize === "none"
        ? []
        : [...file.replay.normalize],
      redactions: (file.replay?.redactions ?? []).map((r) => ({ ...r })),
    },
  };
  const frozen = deepFreeze(policy);
  VALIDATED.add(frozen);
  return { policy: frozen, problems: [] };
}

/**
 * `policy` with `rules` added to its network allow list (`--allow-net`): a policy whose network is "off"
 * gets the list, one with a list gets the rules it lacks (by text) after its own. Validated like its
 * input, so it can be spawned. Throws `E_USAGE` for a policy that is not validated, one whose network is
 * "on" (a flag that would narrow it silently is refused), no rule, or more than {@link MAX_NET_RULES}
 * rules in all. The caller asks for `--ack-network`.
 */
export function withAllowNet(policy: Policy, rules: readonly NetRule[]): Policy {
  if (!isValidatedPolicy(policy)) throw new UsageError("Only a validated policy gets an allow list");
  if (policy.network === "on") {
    throw new UsageError(
      `Flag "--allow-net" cannot apply to policy "${policy.source}": its network is "on" (every host); ` +
        'use a policy whose network is "off" or an allow list',
    );
  }
  if (rules.length === 0) throw new UsageError('Flag "--allow-net" needs at least one HOST[:PORT]');
  const own = policy.network === "off" ? [] : policy.network.allow;
  const merged = [...own];
  for (const rule of rules) {
    if (!merged.some((known) => known.text === rule.text)) merged.push(rule);
  }
  if (merged.length > MAX_NET_RULES) {
    throw new UsageError(
      `The network allow list would hold ${merged.length} rules (policy and --allow-net): at most ` +
        `${MAX_NET_RULES}`,
    );
  }
  const frozen = deepFreeze({ ...policy, network: { allow: merged } });
  VALIDATED.add(frozen);
  return frozen;
}
