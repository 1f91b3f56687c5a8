/**
 * `specter policy check FILE|PRESET`: validate a policy file or preset and print every problem with its
 * stable code, or a one-line summary of the resolved policy.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { UsageError } from "../errors.ts";
import { type Policy, PRESET_NAMES, readPolicy } from "../policy/mod.ts";

const POLICY_FLAGS = {
  "ack-unsafe-write": { type: "boolean" },
  "ack-network": { type: "boolean" },
  cwd: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

const USAGE = "specter policy check FILE|PRESET [--ack-unsafe-write] [--ack-network] [--cwd DIR] [--json]";

/** The JSON document `specter policy check --json` prints. */
export interface PolicyCheckResult {
  /** True when the policy is valid under the given flags. */
  ok: boolean;
  /** `preset:NAME` or `file:/abs/path`. */
  source: string;
  /** Every problem, in document order; empty when `ok`. */
  problems: { code: string; field: string; message: string }[];
  /** The resolved policy, or `null` when there are problems. */
  policy: Policy | null;
}

function parse(args: readonly string[]) {
  try {
    return parseArgs({ args: [...args], options: POLICY_FLAGS, allowPositionals: true, strict: true });
  } catch (error: unknown) {
    throw new UsageError(`${(error as Error).message.split("\n")[0]!.replace(/\.$/, "")}`, { cause: error });
  }
}

/** One line describing a valid policy: its source and what it allows. */
export function policySummary(policy: Policy): string {
  const list = (items: readonly string[]) => JSON.stringify(items);
  const budgets = Object.entries(policy.budgets).filter(([, value]) => value !== null);
  const limits = budgets.length === 0 ? "" : `, budgets ${JSON.stringify(Object.fromEntries(budgets))}`;
  return `ok: ${policy.source} (exec ${list(policy.exec)}, fs.read ${list(policy.fs.read)}, ` +
    `fs.write ${list(policy.fs.write)}, env ${list(policy.env)}, network ${policy.network}${limits})`;
}

/**
 * Runs `specter policy ARGS`. Prints problems (`CODE field: message`, one per line) or the summary with
 * `out`, or the {@link PolicyCheckResult} with `--json`; a count of problems goes to `err` in human mode.
 * Resolves with 0 when the policy is valid and 2 when it is not; throws `UsageError` for a bad command
 * line. The workspace is `--cwd` (default: the current directory), the home directory `HOME`.
 */
export function policyCommand(
  args: readonly string[],
  out: (s: string) => void,
  err: (s: string) => void,
): Promise<number> {
  // The executor turns a thrown UsageError into a rejection, as an async command would.
  return new Promise((resolve) => resolve(policy(args, out, err)));
}

function policy(args: readonly string[], out: (s: string) => void, err: (s: string) => void): number {
  const { values, positionals } = parse(args);
  const [subcommand, spec, ...extra] = positionals;
  if (subcommand === undefined) throw new UsageError(`Missing subcommand: ${USAGE}`);
  if (subcommand !== "check") throw new UsageError(`Unknown policy subcommand "${subcommand}": ${USAGE}`);
  if (spec === undefined) {
    throw new UsageError(`Missing policy: give a file or a preset (${PRESET_NAMES.join(", ")})`);
  }
  if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}": ${USAGE}`);
  const reading = readPolicy(spec, {
    workspace: values.cwd ?? Deno.cwd(),
    home: Deno.env.get("HOME") ?? "",
    acks: { unsafeWrite: values["ack-unsafe-write"] === true, network: values["ack-network"] === true },
  });
  const ok = reading.policy !== null;
  if (values.json === true) {
    const result: PolicyCheckResult = {
      ok,
      source: reading.source,
      problems: reading.problems.map(({ code, field, message }) => ({ code, field, message })),
      policy: reading.policy,
    };
    out(JSON.stringify(result));
  } else if (reading.policy !== null) {
    out(policySummary(reading.policy));
  } else {
    for (const problem of reading.problems) out(`${problem.code} ${problem.field}: ${problem.message}`);
    err(`specter: ${reading.problems.length} problem(s) in ${reading.source}`);
  }
  return ok ? 0 : 2;
}
