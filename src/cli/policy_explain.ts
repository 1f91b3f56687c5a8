/**
 * `specter policy explain`: what a validated policy allows and denies, in plain words, plus what the
 * Linux sandbox always enforces. The text is deterministic (it depends only on the policy, the working
 * directory and the home directory), so each preset's explanation is golden-tested.
 *
 * @module
 */
import { isWithin } from "../fsafe/mod.ts";
import type { Budgets, NetRule, Policy } from "../policy/mod.ts";
import {
  ETC_BINDS,
  ETC_NETWORK_BINDS,
  ETC_PROXY_BINDS,
  NET_PROXY_URL,
  rulesFor,
  SANDBOX_ID,
  seccompOptionsOf,
  SYSTEM_BINDS,
} from "../sandbox/mod.ts";
import { DEFAULTS } from "../session/mod.ts";
import { SECCOMP_RULES } from "../../profiles/seccomp_rules.ts";

/** What an explanation depends on besides the policy. */
export interface ExplainContext {
  /** The run's working directory (`--cwd`), absolute. */
  readonly cwd: string;
  /** The caller's home directory (`HOME`); empty when unset. */
  readonly home: string;
}

/** One statement of an explanation: a title, a one-line summary and optional detail lines. */
export interface ExplainSection {
  /** Stable key for machines, e.g. `exec`, `read`, `seccomp`. */
  readonly key: string;
  /** What the statement is about, e.g. "Programs that may run". */
  readonly title: string;
  /** The answer in one line. */
  readonly summary: string;
  /** Details, one per line; empty when the summary says it all. */
  readonly items: readonly string[];
}

/** The structured form `specter policy explain --json` prints. */
export interface PolicyExplanation {
  /** `preset:NAME` or `file:/abs/path`. */
  readonly source: string;
  /** The run's working directory the explanation is for. */
  readonly cwd: string;
  /** What this policy allows, field by field (keys `exec`, `read`, `write`, `network`, `env`, `limits`, `cwd`). */
  readonly allows: readonly ExplainSection[];
  /** What the Linux sandbox enforces whatever the policy says (keys `privileges`, `isolation`, `filesystem`, `seccomp`). */
  readonly always: readonly ExplainSection[];
  /** The resolved policy explained. */
  readonly policy: Policy;
}

/** The variables every sandboxed program gets, whatever the policy says. */
export const MINIMAL_ENV = ["TERM", "LANG", "PATH", "HOME"] as const;

function unique(paths: readonly string[]): string[] {
  return [...new Set(paths)];
}

function plural(count: number, one: string, many: string): string {
  return count === 1 ? one : many;
}

function execSection(policy: Policy): ExplainSection {
  const caveat = "note: this decides which programs exist to be executed by name; it is not a " +
    "code-execution boundary: the loader, executables in the system library directories, copies in " +
    "/tmp and interpreters (a shell, python) can run any code the program can read";
  // Present in every run on a terminal under bwrap (launch_plan.ts `ownSession`), whatever the policy.
  const launcher =
    "note: on a terminal util-linux setsid starts the program (it is present inside) so that " +
    "the program, not the sandbox, leads the terminal's session";
  if (policy.exec.length === 0) {
    return {
      key: "exec",
      title: "Programs that may run",
      summary: "only the program you start",
      items: [caveat, launcher],
    };
  }
  return {
    key: "exec",
    title: "Programs that may run",
    summary: `the program you start, and the programs in ${
      plural(policy.exec.length, "this place", "these places")
    }`,
    items: [...policy.exec, caveat, launcher],
  };
}

function readSection(policy: Policy): ExplainSection {
  const own = unique([...policy.fs.read, ...policy.fs.write]);
  const system = [
    ...(policy.exec.length === 0 ? [] : [`the programs that may run: ${policy.exec.join(", ")}`]),
    `system files: ${SYSTEM_BINDS.join(", ")} (those that exist)`,
    `from /etc: ${ETC_BINDS.map((path) => path.replace(/^\/etc\//, "")).join(", ")}`,
    ...(policy.network === "on"
      ? [`for DNS and TLS: ${ETC_NETWORK_BINDS.map((path) => path.replace(/^\/etc\//, "")).join(", ")}`]
      : policy.network !== "off"
      ? [
        `for TLS: ${
          ETC_PROXY_BINDS.map((path) => path.replace(/^\/etc\//, "")).join(", ")
        } (no resolver files)`,
      ]
      : []),
    "its own /proc, a minimal /dev and its private /tmp",
  ];
  if (own.length === 0) {
    return {
      key: "read",
      title: "Files it can read",
      summary: "none of your files; only what programs need to run, read-only",
      items: system,
    };
  }
  return {
    key: "read",
    title: "Files it can read",
    summary: `${plural(own.length, "this path", "these paths")} and everything under ${
      plural(own.length, "it", "them")
    }, plus what programs need to run (read-only)`,
    items: [
      ...own,
      ...system,
      "note: secrets these paths only contain stay hidden (~/.ssh, ~/.gnupg, ~/.aws, ~/.netrc, credential " +
      "files, /etc/shadow, …: SECRET_PATHS in src/sandbox/secrets.ts), unless a path names them",
    ],
  };
}

function writeSection(policy: Policy): ExplainSection {
  const paths = policy.fs.write;
  if (paths.length === 0) {
    return {
      key: "write",
      title: "Files it can write",
      summary: "nothing on your machine (a private /tmp only, discarded when the run ends)",
      items: [],
    };
  }
  return {
    key: "write",
    title: "Files it can write",
    summary: `${plural(paths.length, "this path", "these paths")} and everything under ${
      plural(paths.length, "it", "them")
    } (accepted with --ack-unsafe-write), plus a private /tmp`,
    items: [
      ...paths,
      "note: a run with --strict-write keeps .git, shell start-up files and credentials (.ssh, .netrc, …) " +
      "inside them read-only",
    ],
  };
}

/** One allow-list rule in words. */
export function describeNetRule(rule: NetRule): string {
  const port = rule.port === null ? "any port" : `port ${rule.port}`;
  switch (rule.kind) {
    case "name":
      return `${rule.text}: the name ${rule.host} (not its subdomains), ${port}`;
    case "suffix":
      return `${rule.text}: every subdomain of ${rule.host} (not ${rule.host} itself: list it too if ` +
        `it is wanted), ${port}`;
    case "ipv4":
    case "ipv6":
      return `${rule.text}: the address ${rule.host}, ${port}`;
  }
}

function allowListSection(rules: readonly NetRule[], sockets: readonly string[]): ExplainSection {
  return {
    key: "network",
    title: "Network",
    summary: `only ${plural(rules.length, "this host", "these hosts")}, through Specter's proxy ` +
      "(accepted with --ack-network)",
    items: [
      ...rules.map(describeNetRule),
      `how: programs reach the proxy at ${NET_PROXY_URL} inside the sandbox (its own network namespace, loopback ` +
      "only); HTTP_PROXY, HTTPS_PROXY, ALL_PROXY (and lower case) point there, NO_PROXY is empty; plain " +
      "HTTP requests and CONNECT tunnels (HTTPS) to an allowed host and port pass, anything else gets a 403",
      "names: the proxy resolves them itself (the hosts file counts); an allowed name that resolves to a " +
      "loopback, private, link-local or multicast address is refused, unless the rule names that address " +
      "or localhost itself",
      "no DNS leaves the sandbox (no resolver configuration inside, no route out), nor does any direct " +
      "socket, TCP or UDP: only connections through the proxy leave",
      "every connection, allowed or refused, is recorded in the run's audit log (specter audit net)",
      "note: what a program sends to an allowed host is not inspected: an allowed host can receive your data",
      ...sockets.map((path) => `socket: ${path}`),
    ],
  };
}

function networkSection(policy: Policy): ExplainSection {
  const sockets = policy.fs.sockets ?? [];
  if (typeof policy.network === "object") return allowListSection(policy.network.allow, sockets);
  if (policy.network === "off" && sockets.length > 0) {
    return {
      key: "network",
      title: "Network",
      summary: `none, but ${sockets.length} host unix socket(s) (accepted with --ack-host-sockets)`,
      items: [
        ...sockets.map((path) => `socket: ${path}`),
        "limit: unix sockets are allowed in general (seccomp cannot see which address connect() names), " +
        "so every host socket visible under a read or write grant is reachable too; abstract sockets and " +
        "host SysV/POSIX IPC stay out of reach",
      ],
    };
  }
  return policy.network === "on"
    ? {
      key: "network",
      title: "Network",
      summary: "yes, like the host's (accepted with --ack-network)",
      items: [
        "note: raw packet sockets (AF_PACKET) and rare socket families stay denied",
        "note: unix sockets are allowed too: any host socket visible under a read or write grant, and the " +
        "host's abstract unix sockets, can be connected to",
        ...sockets.map((path) => `socket: ${path}`),
      ],
    }
    : {
      key: "network",
      title: "Network",
      summary: "none (its own empty network namespace: not even the host's loopback)",
      items: [
        "no unix socket can be created and no datagram socketpair (stream pairs still work), so no host socket is reachable, " +
        "even one under a read or write grant; no host SysV or POSIX IPC (own IPC namespace and /dev/shm)",
      ],
    };
}

function envSection(policy: Policy, ctx: ExplainContext): ExplainSection {
  const visible = [...policy.fs.read, ...policy.fs.write];
  const homeVisible = ctx.home !== "" && visible.some((root) => isWithin(ctx.home, root));
  const passed = policy.env.filter((name) => !(MINIMAL_ENV as readonly string[]).includes(name));
  const summary = `only ${MINIMAL_ENV.join(", ")}` +
    (policy.env.length === 0
      ? ""
      : `, and ${policy.env.join(", ")} when set in your environment (values are never printed or logged)`);
  return {
    key: "env",
    title: "Environment",
    summary,
    items: [
      "TERM=xterm-256color",
      "LANG=C.UTF-8",
      `PATH=${DEFAULTS.path}`,
      homeVisible
        ? `HOME=${ctx.home} (your home directory)`
        : "HOME=/tmp (your home directory is not visible)",
      ...(passed.length === 0 ? [] : [`${passed.join(", ")}: your values`]),
      "and each --env NAME=VALUE given to the run",
    ],
  };
}

const BINARY_UNITS = [["GiB", 1024 ** 3], ["MiB", 1024 ** 2], ["KiB", 1024]] as const;
const TIME_UNITS = [["h", 3_600_000], ["min", 60_000], ["s", 1000]] as const;

function bytes(value: number): string {
  const unit = BINARY_UNITS.find(([, size]) => value >= size && value % size === 0);
  return unit === undefined ? `${value} bytes` : `${value / unit[1]} ${unit[0]}`;
}

function milliseconds(value: number): string {
  const unit = TIME_UNITS.find(([, size]) => value >= size && value % size === 0);
  return unit === undefined ? `${value} ms` : `${value / unit[1]} ${unit[0]}`;
}

/** Each budget in words: its label and its value with a unit. */
const BUDGET_WORDS: Readonly<Record<keyof Budgets, readonly [string, (value: number) => string]>> = {
  wall_ms: ["wall clock", milliseconds],
  cpu_seconds: ["CPU time of all its processes", (v) => `${v} s`],
  memory_bytes: ["memory of all its processes", bytes],
  processes: ["processes", String],
  output_bytes: ["terminal output", bytes],
  file_size_bytes: ["size of any file it writes", bytes],
};

/** Budgets the launch plan also sets as kernel rlimits, through `prlimit`. */
const RLIMIT_BUDGETS = ["cpu_seconds", "memory_bytes", "processes", "file_size_bytes"] as const;

function limitsSection(policy: Policy): ExplainSection {
  const items: string[] = [];
  for (const key of Object.keys(BUDGET_WORDS) as (keyof Budgets)[]) {
    const value = policy.budgets[key];
    const [label, words] = BUDGET_WORDS[key];
    if (value !== null) items.push(`${label}: ${words(value)} (${key} = ${value})`);
  }
  const rlimits = RLIMIT_BUDGETS.filter((key) => policy.budgets[key] !== null);
  if (rlimits.length > 0) {
    items.push("note: util-linux prlimit starts the program (it is present inside) to set the kernel limits");
  }
  return {
    key: "limits",
    title: "Limits",
    summary: items.length === 0
      ? "none in the policy (a run can still set its own, e.g. --timeout, --max-output, --max-memory)"
      : "the run is stopped when it reaches one of these (a run can tighten them, never loosen them)",
    items,
  };
}

function cwdSection(policy: Policy, ctx: ExplainContext): ExplainSection {
  const visible = [...policy.fs.read, ...policy.fs.write];
  const inside = visible.some((root) => isWithin(ctx.cwd, root));
  return {
    key: "cwd",
    title: "Starts in",
    summary: inside
      ? `${ctx.cwd} (the working directory)`
      : `/tmp (the working directory ${ctx.cwd} is not visible)`,
    items: [],
  };
}

/** A one-line summary of the seccomp rule table, in words. */
export const SECCOMP_SUMMARY =
  "deny tracing other processes, setuid and setgid bits, file leases, mounts and " +
  "new namespaces, kernel modules " +
  "and kexec, eBPF, perf events, userfaultfd, io_uring, kernel keyrings, terminal input injection " +
  "(TIOCSTI), raw packet sockets and host administration (clock, swap, reboot); a system call of " +
  "another architecture kills the program";

function alwaysSections(policy: Policy): ExplainSection[] {
  const namespaces = policy.network === "on"
    ? "user, mount, PID, IPC, UTS and cgroup namespaces (the network is shared)"
    : "user, mount, PID, IPC, UTS, cgroup and network namespaces";
  return [
    {
      key: "privileges",
      title: "Privileges",
      summary: `none (uid and gid ${SANDBOX_ID} inside, the caller's on the host, so what it writes is ` +
        "yours; started by root, a host uid of its own, with what it writes stored as root's; no " +
        "capabilities or groups; no new privileges, so setuid programs gain nothing, and it can set no " +
        "setuid or setgid bit)",
      items: [],
    },
    {
      key: "isolation",
      title: "Isolation",
      summary: `its own ${namespaces}; it sees only its own processes and dies with Specter`,
      items: [],
    },
    {
      key: "filesystem",
      title: "Filesystem",
      summary: "an empty read-only root with only the paths above; policy paths are resolved through " +
        "symlinks at launch and refused if they lead somewhere forbidden; host-wide /proc files (kernel " +
        "command line and config, keys, kernel symbols, interrupts, …) are masked; /tmp and /dev/shm are " +
        "private tmpfs of a bounded size",
      items: [],
    },
    {
      key: "seccomp",
      title: "Seccomp",
      summary: `${
        rulesFor(SECCOMP_RULES, seccompOptionsOf(policy)).length
      } rules ${SECCOMP_SUMMARY} (the table: specter policy render)`,
      items: [],
    },
  ];
}

/** Explains `policy` for a run in `ctx.cwd` by a caller whose home is `ctx.home`. Pure. */
export function explainPolicy(policy: Policy, ctx: ExplainContext): PolicyExplanation {
  return {
    source: policy.source,
    cwd: ctx.cwd,
    allows: [
      execSection(policy),
      readSection(policy),
      writeSection(policy),
      networkSection(policy),
      envSection(policy, ctx),
      limitsSection(policy),
      cwdSection(policy, ctx),
    ],
    always: alwaysSections(policy),
    policy,
  };
}

function sectionLines(section: ExplainSection): string[] {
  return [`  ${section.title}: ${section.summary}`, ...section.items.map((item) => `    - ${item}`)];
}

/** The human form of an explanation (lines joined with `\n`, no trailing newline). */
export function formatExplanation(explanation: PolicyExplanation): string {
  return [
    `Policy ${explanation.source}, for a run in ${explanation.cwd}`,
    "",
    "What the program may do:",
    ...explanation.allows.flatMap(sectionLines),
    "",
    "Always, under the Linux sandbox (bubblewrap):",
    ...explanation.always.flatMap(sectionLines),
  ].join("\n");
}
