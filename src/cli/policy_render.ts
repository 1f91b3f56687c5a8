/**
 * `specter policy render`: the exact launch plan a run with the same options executes, for a reviewer.
 * The plan comes from `prepareLaunch`, the function `spawn` itself uses, so the argv, the seccomp filter,
 * the Seatbelt profile and the fingerprint printed here are those of the real run; a run's audit log
 * records the same {@link PlanFingerprint}. Environment values are never printed.
 *
 * @module
 */
import { SandboxError } from "../errors.ts";
import {
  describeRules,
  fingerprintPlan,
  type LaunchPlan,
  NET_PROXY_ENV,
  NET_PROXY_URL,
  type PlanDescriptor,
  type PlanFingerprint,
  REDACTED,
  redactedArgv,
  type RuleDescription,
  SANDBOX_EXEC,
  type SeccompArch,
  seccompArchFor,
  seccompOptionsOf,
  sha256,
} from "../sandbox/mod.ts";
import { prepareLaunch, type SpawnOptions } from "../session/mod.ts";

/** The backends `policy render` renders. */
export const RENDER_BACKENDS = ["bwrap", "seatbelt"] as const;

/** The command `policy render` renders when none is given after `--`. */
export const DEFAULT_RENDER_COMMAND: readonly string[] = ["/bin/sh"];

/** The `purpose` of the seccomp filter among a bwrap plan's files (a key of `files_sha256`). */
export const SECCOMP_PURPOSE = "seccomp-bpf filter";

/** The seccomp part of a bwrap rendering. */
export interface RenderedSeccomp {
  /** The architecture the filter was compiled for (this machine's). */
  readonly arch: SeccompArch;
  /** The fd bwrap reads it from (`--seccomp FD`). */
  readonly fd: number;
  /** Size of the classic BPF program in bytes (8 per instruction). */
  readonly bytes: number;
  /** sha256 of the program, equal to the fingerprint's `files_sha256["seccomp-bpf filter"]`. */
  readonly sha256: string;
  /** The rules, in filter order; every system call not listed is allowed. */
  readonly rules: readonly RuleDescription[];
}

/** The network part of a rendering (an allow-list policy). */
export interface RenderedNet {
  /** The proxy's address inside the sandbox. */
  readonly proxy: string;
  /** The rules, as written. */
  readonly rules: readonly string[];
  /** The proxy variables the program gets, with their values. */
  readonly env: Readonly<Record<string, string>>;
}

/** The document `specter policy render --json` prints. */
export interface LaunchRendering {
  /** The backend. */
  readonly backend: string;
  /** The policy's source (`preset:NAME`, `file:/abs/path`). */
  readonly source: string | null;
  /** The program as the run resolves it (absolute). */
  readonly program: string;
  /** The directory the program starts in, as it sees it. */
  readonly program_cwd: string;
  /** The launch argv, with every environment value replaced by `<redacted>`. */
  readonly argv: readonly string[];
  /** Names of the launcher's own environment variables (values are never printed). */
  readonly env_names: readonly string[];
  /** What the run's audit log records for the same options. */
  readonly fingerprint: PlanFingerprint;
  /**
   * The paths bound from descriptors (bwrap): each was opened once, without following a link root did
   * not make, and is passed on fd `target`; after setup the sandbox's mount table must show `identity`
   * at `dest` before the program runs (the gate on fds `gate.block`/`gate.info`).
   */
  readonly descriptors?: readonly PlanDescriptor[];
  /**
   * The network allow list (a policy with one): its rules as written, where the program reaches the proxy,
   * and the variables (not secret, so shown with their values) that point it there.
   */
  readonly net?: RenderedNet;
  /** The seccomp filter (bwrap). */
  readonly seccomp?: RenderedSeccomp;
  /** The Seatbelt profile text (seatbelt). */
  readonly profile?: string;
}

/**
 * The Seatbelt profile of a Seatbelt plan, `argv[2]` of `[SANDBOX_EXEC, "-p", PROFILE, program, …]`;
 * throws `E_SANDBOX_START` when the plan has another shape.
 */
export function seatbeltProfileOf(plan: LaunchPlan): string {
  const [launcher, flag, profile] = plan.argv;
  if (launcher !== SANDBOX_EXEC || flag !== "-p" || profile === undefined) {
    throw new SandboxError(
      "E_SANDBOX_START",
      `The Seatbelt launch plan does not start with "${SANDBOX_EXEC} -p PROFILE"`,
    );
  }
  return profile;
}

function netOf(plan: LaunchPlan): { net: RenderedNet } | Record<never, never> {
  const network = plan.policy?.network;
  if ((plan.netProxy ?? null) === null || typeof network !== "object") return {};
  return {
    net: { proxy: NET_PROXY_URL, rules: network.allow.map((rule) => rule.text), env: { ...NET_PROXY_ENV } },
  };
}

function netLines(net: RenderedNet): string[] {
  return [
    `Network allow list (only through Specter's proxy at ${net.proxy}; no DNS, no direct socket):`,
    ...net.rules.map((rule) => `  ${rule}`),
    "Proxy environment of the program (overrides --env and the policy's env):",
    ...Object.entries(net.env).map(([name, value]) => `  ${name}=${value}`),
  ];
}

/** Renders a prepared plan: redacted argv, fingerprint, and the seccomp table or Seatbelt profile. */
export function renderPlan(plan: LaunchPlan, program: string): LaunchRendering {
  const base = {
    backend: plan.backend,
    source: plan.policy?.source ?? null,
    program,
    program_cwd: plan.programCwd,
    argv: redactedArgv(plan.argv),
    env_names: Object.keys(plan.env).sort(),
    fingerprint: fingerprintPlan(plan),
    ...netOf(plan),
  };
  if (plan.backend === "seatbelt") return { ...base, profile: seatbeltProfileOf(plan) };
  const filter = plan.files.find((file) => file.purpose === SECCOMP_PURPOSE);
  if (filter === undefined) return base;
  const arch = seccompArchFor(Deno.build.arch);
  return {
    ...base,
    descriptors: plan.descriptors.map((d) => ({ ...d })),
    seccomp: {
      arch,
      fd: filter.target,
      bytes: filter.content.length,
      sha256: sha256(filter.content),
      // The rules of the filter this plan carries (network off closes AF_UNIX; see seccomp_rules.ts).
      rules: describeRules(arch, plan.policy === null ? { network: false } : seccompOptionsOf(plan.policy)),
    },
  };
}

/**
 * Renders the plan `spawn(options)` executes (via `prepareLaunch`, the same function). Throws what
 * `spawn` throws before starting anything: `E_POLICY_*` when a path resolves somewhere forbidden,
 * `E_SANDBOX_UNAVAILABLE` when bwrap (or `prlimit`, for ceilings) cannot run here, `E_SPAWN_NOT_FOUND`
 * for an unknown program.
 */
export function renderLaunch(options: SpawnOptions): LaunchRendering {
  const { plan, program } = prepareLaunch(options);
  return renderPlan(plan, program);
}

const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * Quotes `arg` for a POSIX shell only when needed: plain words stay as they are, others get single
 * quotes, and control characters (a newline in a path) use `$'…'` escapes so each argument stays on one
 * line.
 */
export function shellQuote(arg: string): string {
  if (SAFE_WORD.test(arg)) return arg;
  // deno-lint-ignore no-control-regex
  if (!/[\x00-\x1f\x7f]/.test(arg)) return `'${arg.replaceAll("'", `'\\''`)}'`;
  let out = "";
  for (const char of arg) {
    const code = char.codePointAt(0)!;
    if (char === "\\" || char === "'") out += `\\${char}`;
    else if (char === "\n") out += "\\n";
    else if (char === "\t") out += "\\t";
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += char;
  }
  return `$'${out}'`;
}

function descriptorLines(descriptors: NonNullable<LaunchRendering["descriptors"]>): string[] {
  return [
    "Bound from descriptors (each opened once, no link followed unless root made it; the program runs only",
    "after the sandbox's mount table shows each at its place, and no other writable mount):",
    ...descriptors.map((d) =>
      `  fd ${d.target}  ${d.writable ? "rw" : "ro"}  ${d.purpose.padEnd(7)}  ${shellQuote(d.path)}${
        d.dest === d.path ? "" : ` -> ${shellQuote(d.dest)}`
      }  (${d.identity})`
    ),
  ];
}

function seccompLines(seccomp: RenderedSeccomp): string[] {
  const x32 = seccomp.arch === "x86_64" ? "x32 system calls fail with EPERM; " : "";
  const rows = [
    { syscall: "SYSCALL", nr: "NR", action: "ACTION", reason: "REASON", condition: null },
    ...seccomp.rules.map((rule) => ({ ...rule, nr: String(rule.nr) })),
  ];
  const width = (pick: (row: typeof rows[number]) => string) =>
    Math.max(...rows.map((row) => pick(row).length));
  const [syscall, nr, action] = [width((r) => r.syscall), width((r) => r.nr), width((r) => r.action)];
  const indent = " ".repeat(2 + syscall + 2 + nr + 2 + action + 2);
  return [
    `Seccomp filter (fd ${seccomp.fd}, ${seccomp.arch}): ${seccomp.bytes} bytes, ${
      seccomp.bytes / 8
    } instructions, sha256 ${seccomp.sha256}`,
    `  A system call of another architecture kills the program; ${x32}every system call not listed is allowed`,
    ...rows.flatMap((row) => [
      `  ${row.syscall.padEnd(syscall)}  ${row.nr.padEnd(nr)}  ${row.action.padEnd(action)}  ${row.reason}`,
      ...(row.condition === null ? [] : [`${indent}only when ${row.condition}`]),
    ]),
  ];
}

/**
 * The argv as one shell-quoted command, one option per line (a new line before each argument that
 * starts with "-"), joined with backslash continuations. Every argument appears once, in order.
 */
export function commandLines(args: readonly string[]): string[] {
  const lines: string[][] = [];
  for (const arg of args) {
    if (lines.length === 0 || arg.startsWith("-")) lines.push([]);
    lines.at(-1)!.push(arg);
  }
  return lines.map((words, i) =>
    `${i === 0 ? "" : "  "}${words.join(" ")}${i === lines.length - 1 ? "" : " \\"}`
  );
}

/** What the argv listing shows in place of the Seatbelt profile (not valid shell, on purpose). */
const PROFILE_PLACEHOLDER = "<the Seatbelt profile below>";

function profileLines(profile: string): string[] {
  const lines = profile.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return [
    `Seatbelt profile (passed with -p; ${lines.length} lines, sha256 ${sha256(profile)}):`,
    ...lines,
  ];
}

/** The human form of a rendering (lines joined with `\n`, no trailing newline). */
export function formatRendering(rendering: LaunchRendering): string {
  // The profile (argv[2]) is printed below, verbatim, rather than as one quoted line.
  const argv = commandLines(
    rendering.argv.map((arg, i) =>
      rendering.profile !== undefined && i === 2 ? PROFILE_PLACEHOLDER : shellQuote(arg)
    ),
  );
  const { fingerprint } = rendering;
  return [
    `Backend: ${rendering.backend}`,
    `Policy: ${rendering.source ?? "none"}`,
    `Program: ${rendering.program}, starting in ${rendering.program_cwd}`,
    `Launcher environment (names only): ${
      rendering.env_names.length === 0 ? "none" : rendering.env_names.join(", ")
    }`,
    "",
    `Command line (shell-quoted, one option per line; environment values are ${REDACTED}):`,
    ...argv.map((arg) => `  ${arg}`),
    "",
    ...(rendering.net === undefined ? [] : [...netLines(rendering.net), ""]),
    ...(rendering.descriptors === undefined ? [] : [...descriptorLines(rendering.descriptors), ""]),
    ...(rendering.seccomp === undefined ? [] : [...seccompLines(rendering.seccomp), ""]),
    ...(rendering.profile === undefined ? [] : [...profileLines(rendering.profile), ""]),
    "Fingerprint (the audit log of a run with the same options records the same values):",
    `  backend: ${fingerprint.backend}`,
    `  argv_sha256: ${fingerprint.argv_sha256}`,
    ...Object.entries(fingerprint.files_sha256).map(([purpose, hash]) =>
      `  files_sha256[${JSON.stringify(purpose)}]: ${hash}`
    ),
    `  policy_sha256: ${fingerprint.policy_sha256 ?? "none"}`,
  ].join("\n");
}
