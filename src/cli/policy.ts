/**
 * `specter policy check|explain|render FILE|PRESET`: validate a policy file or preset and print every
 * problem with its stable code; or, for a valid policy, a one-line summary (`check`), what it allows and
 * denies in plain words (`explain`), or the exact launch plan a run executes (`render`).
 *
 * @module
 */
import { PolicyError, type PolicyProblem, UsageError } from "../errors.ts";
import { didYouMean } from "../protocol/mod.ts";
import { hostHome, type NetRule, type Policy, PRESET_NAMES, readPolicy } from "../policy/mod.ts";
import { platformBackend } from "../session/mod.ts";
import { explainPolicy, formatExplanation } from "./policy_explain.ts";
import { allowNetRules, applyAllowNet, type FlagValues, parseFlags, sessionOptions } from "./flags.ts";
import { type CommandDoc, commandOptions, type FlagTable, HELP_FLAG } from "./flag_table.ts";
import { DEFAULT_RENDER_COMMAND, formatRendering, RENDER_BACKENDS, renderLaunch } from "./policy_render.ts";

/** The flags every policy subcommand takes. */
const POLICY_FLAGS = {
  "ack-unsafe-write": { type: "boolean", description: "Accept a policy that allows host writes (fs.write)" },
  "ack-network": {
    type: "boolean",
    description: 'Accept a policy with network "on" or an allow list (also needed by --allow-net)',
  },
  "allow-net": {
    type: "string",
    value: "HOST[:PORT],…",
    multiple: true,
    description: "As for run: these hosts are added to the policy's network allow list (repeatable)",
  },
  "ack-host-sockets": {
    type: "boolean",
    description: "Accept a policy that grants host unix sockets (fs.sockets)",
  },
  cwd: {
    type: "string",
    value: "DIR",
    description: "The run's working directory, ${workspace} (default: current directory)",
  },
  json: {
    type: "boolean",
    description: "check: {ok, source, problems, policy}; explain: {source, cwd, allows, always, policy}; " +
      "render: {backend, source, program, program_cwd, argv, env_names, fingerprint, seccomp | profile}",
  },
  ...HELP_FLAG,
} as const satisfies FlagTable;

/** The ceilings' description: each adds the same launcher. */
const CEILING = "As for run: a ceiling (ceilings add the prlimit launcher to the plan)";

/** render only: the backend, and the run flags that change its launch plan (as `specter run` takes them). */
const RENDER_FLAGS = {
  backend: {
    type: "string",
    value: "NAME",
    description: RENDER_BACKENDS.join(" or ") +
      " (default: this platform's). Seatbelt renders anywhere (text)",
  },
  "strict-write": {
    type: "boolean",
    description: "As for run: protected names stay read-only (needs --ack-unsafe-write)",
  },
  env: {
    type: "string",
    value: "NAME=VALUE",
    multiple: true,
    description: "As for run (repeatable); the value is never printed",
  },
  shell: { type: "boolean", description: "As for run: the command goes through /bin/sh -c" },
  "max-memory": { type: "string", value: "SIZE", description: CEILING },
  "max-cpu": { type: "string", value: "DUR", description: CEILING },
  "max-procs": { type: "string", value: "N", description: CEILING },
  "max-file-size": { type: "string", value: "SIZE", description: CEILING },
} as const satisfies FlagTable;

/** `specter policy`'s help: the flags of every subcommand, then those only `render` takes. */
export const POLICY_DOC: CommandDoc = {
  name: "policy",
  usage: [
    "specter policy check FILE|PRESET [flags]",
    "specter policy explain FILE|PRESET [flags]",
    "specter policy render FILE|PRESET [--backend bwrap|seatbelt] [flags] [-- CMD ARGS…]",
  ],
  about: `Every subcommand first validates a policy file (.json or .toml, spec/policy.md) or a preset (strict,
basic, workspace, agent) for a run in --cwd. A bad policy prints every problem as "CODE field: message" (with
--json: {ok, source, problems, policy}) and exits 2. For a valid policy (exit 0):
  check      One "ok: …" line that summarizes what the policy allows
  explain    What the program may do and what the sandbox always enforces, in plain words
  render     The exact launch plan a run with the same options executes: the command line (environment
             values <redacted>), the seccomp rule table and its sha256 (bwrap) or the Seatbelt profile
             (seatbelt), and the fingerprint a run's audit log records. Default command: /bin/sh`,
  groups: [
    { title: "Policy flags", flags: POLICY_FLAGS },
    {
      title: "Render flags (the run's flags that change its plan; give the same ones as the run)",
      flags: RENDER_FLAGS,
    },
  ],
};

/** The run flags that change a launch plan, which only `policy render` needs. */
const PLAN_FLAGS = [
  "strict-write",
  "env",
  "shell",
  "max-memory",
  "max-cpu",
  "max-procs",
  "max-file-size",
] as const;

/** Flags only `policy render` accepts. */
const RENDER_ONLY_FLAGS = ["backend", ...PLAN_FLAGS] as const;

/** The run flags `policy render` hands to the run's own option builder unchanged. */
const RUN_FLAGS = [
  "ack-unsafe-write",
  "ack-network",
  "ack-host-sockets",
  "allow-net",
  "cwd",
  ...PLAN_FLAGS,
] as const;

/** The policy subcommands. */
export const POLICY_SUBCOMMANDS = ["check", "explain", "render"] as const;

const USAGE = "specter policy check|explain|render FILE|PRESET [--ack-unsafe-write] [--ack-network] " +
  "[--ack-host-sockets] [--allow-net HOST[:PORT],…] " +
  "[--cwd DIR] [--json]";

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

function parse(
  args: readonly string[],
): { values: FlagValues; positionals: string[]; command: string[] | null } {
  // Everything after the first "--" is the command `policy render` renders.
  const dash = args.indexOf("--");
  const flags = dash < 0 ? args : args.slice(0, dash);
  const command = dash < 0 ? null : args.slice(dash + 1);
  return { ...parseFlags(flags, commandOptions(POLICY_DOC)), command };
}

/** One line describing a valid policy: its source and what it allows. */
export function policySummary(policy: Policy): string {
  const list = (items: readonly string[]) => JSON.stringify(items);
  const budgets = Object.entries(policy.budgets).filter(([, value]) => value !== null);
  const limits = budgets.length === 0 ? "" : `, budgets ${JSON.stringify(Object.fromEntries(budgets))}`;
  const network = typeof policy.network === "string"
    ? policy.network
    : `allow ${list(policy.network.allow.map((rule) => rule.text))}`;
  return `ok: ${policy.source} (exec ${list(policy.exec)}, fs.read ${list(policy.fs.read)}, ` +
    `fs.write ${list(policy.fs.write)}, env ${list(policy.env)}, network ${network}${limits})`;
}

/**
 * Runs `specter policy ARGS`. Every subcommand first validates the policy: problems are printed as
 * `CODE field: message` lines with `out` (or the {@link PolicyCheckResult} with `--json`), a count goes to
 * `err` in human mode, and the command resolves with 2. For a valid policy, `check` prints the summary (or
 * the result), `explain` the {@link formatExplanation} text (or the explanation as JSON) and `render` the
 * {@link formatRendering} text (or the rendering as JSON), and the command resolves with 0. Throws
 * `UsageError` for a bad command line and, for `render`, what `spawn` would throw before starting
 * anything (e.g. `E_SANDBOX_UNAVAILABLE`). The workspace is `--cwd` (default: the current directory), the
 * home directory `HOME`.
 */
export function policyCommand(
  args: readonly string[],
  out: (s: string) => void,
  err: (s: string) => void,
): Promise<number> {
  // The executor turns a thrown UsageError into a rejection, as an async command would.
  return new Promise((resolve) => resolve(policy(args, out, err)));
}

type Subcommand = typeof POLICY_SUBCOMMANDS[number];

function isSubcommand(name: string): name is Subcommand {
  return (POLICY_SUBCOMMANDS as readonly string[]).includes(name);
}

function policy(args: readonly string[], out: (s: string) => void, err: (s: string) => void): number {
  const { values, positionals, command } = parse(args);
  const [subcommand, spec, ...extra] = positionals;
  if (subcommand === undefined) throw new UsageError(`Missing subcommand: ${USAGE}`);
  if (!isSubcommand(subcommand)) {
    throw new UsageError(
      `Unknown policy subcommand "${subcommand.slice(0, 80)}"${
        didYouMean(subcommand, POLICY_SUBCOMMANDS)
      }: ${USAGE}`,
    );
  }
  if (spec === undefined) {
    throw new UsageError(`Missing policy: give a file or a preset (${PRESET_NAMES.join(", ")})`);
  }
  if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}": ${USAGE}`);
  if (subcommand !== "render") {
    const flag = RENDER_ONLY_FLAGS.find((name) => values[name] !== undefined);
    if (flag !== undefined) throw new UsageError(`Flag "--${flag}" applies only to specter policy render`);
    if (command !== null) {
      throw new UsageError(`Unexpected command after "--": only specter policy render takes one`);
    }
  }
  // Checked before the policy is read: a wrong backend or an empty command is a usage error either way.
  const render = subcommand === "render" ? renderChoices(values, command) : null;
  // As for run: --allow-net without --ack-network is refused before the policy is read; its bad patterns
  // are problems like the policy's own.
  let allowNet: NetRule[] | null;
  try {
    allowNet = allowNetRules(values);
  } catch (error: unknown) {
    if (!(error instanceof PolicyError)) throw error;
    return reportProblems(error.problems, "flag --allow-net", values.json === true, out, err);
  }
  const cwd = typeof values.cwd === "string" ? values.cwd : Deno.cwd();
  const home = hostHome();
  const reading = readPolicy(spec, {
    workspace: cwd,
    home,
    acks: {
      unsafeWrite: values["ack-unsafe-write"] === true,
      network: values["ack-network"] === true,
      hostSockets: values["ack-host-sockets"] === true,
    },
  });
  if (reading.policy === null) {
    return reportProblems(reading.problems, reading.source, values.json === true, out, err);
  }
  const json = values.json === true;
  const policy = applyAllowNet(reading.policy, allowNet);
  switch (subcommand) {
    case "check": {
      const result: PolicyCheckResult = {
        ok: true,
        source: reading.source,
        problems: [],
        policy,
      };
      out(json ? JSON.stringify(result) : policySummary(policy));
      return 0;
    }
    case "explain": {
      const explanation = explainPolicy(policy, { cwd, home });
      out(json ? JSON.stringify(explanation) : formatExplanation(explanation));
      return 0;
    }
    case "render": {
      // The run's own option builder turns the same flags into the same spawn options.
      const options = sessionOptions({ ...render!.values, policy: spec }, render!.command);
      const rendering = renderLaunch(options);
      out(json ? JSON.stringify(rendering) : formatRendering(rendering));
      return 0;
    }
  }
}

/** Prints `problems` (of the policy `source`) as `CODE field: message` lines, or the JSON result; 2. */
function reportProblems(
  problems: readonly PolicyProblem[],
  source: string,
  json: boolean,
  out: (s: string) => void,
  err: (s: string) => void,
): number {
  if (json) {
    const result: PolicyCheckResult = {
      ok: false,
      source,
      problems: problems.map(({ code, field, message }) => ({ code, field, message })),
      policy: null,
    };
    out(JSON.stringify(result));
  } else {
    for (const problem of problems) out(`${problem.code} ${problem.field}: ${problem.message}`);
    err(`specter: ${problems.length} problem(s) in ${source}`);
  }
  return 2;
}

/**
 * The run that `policy render` renders: the flags `specter run` would get (`--sandbox BACKEND` and the
 * run flags given here; the caller adds `--policy`) and the command (default: `/bin/sh`).
 */
function renderChoices(
  values: FlagValues,
  command: string[] | null,
): { values: FlagValues; command: string[] } {
  const backend = typeof values.backend === "string" ? values.backend : platformBackend();
  if (!(RENDER_BACKENDS as readonly string[]).includes(backend)) {
    throw new UsageError(`Flag "--backend" must be one of ${RENDER_BACKENDS.join(", ")}, got "${backend}"`);
  }
  if (command !== null && command.length === 0) {
    throw new UsageError('No command after "--": give one, or leave out "--" to render /bin/sh');
  }
  const run: FlagValues = { sandbox: backend };
  for (const flag of RUN_FLAGS) run[flag] = values[flag];
  return { values: run, command: command ?? [...DEFAULT_RENDER_COMMAND] };
}
