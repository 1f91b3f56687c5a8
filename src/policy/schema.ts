/**
 * The policy file format, version 1: the zod schema is the single source of truth for its shape (types,
 * known keys). `spec/schema/policy.schema.json` is generated from it. Path rules, broad roots and the
 * acknowledgements need the run's context and live in `check.ts`.
 *
 * @module
 */
import { z } from "zod";
import { DURATION_TOO_LONG, MAX_DURATION_MS } from "../protocol/mod.ts";
import { FILTER_NAMES, type FilterName } from "./normalize.ts";

/** The only policy format version this Specter reads. */
export const POLICY_VERSION = 1;

/** What an environment variable name passed through must look like. */
export const ENV_NAME_PATTERN: RegExp = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The `network` values besides an allow list. */
export const NETWORK_MODES = ["off", "on"] as const;

/** Most rules a network allow list holds (a policy file's and `--allow-net`'s together). */
export const MAX_NET_RULES = 256;

/** The keys of `budgets`, each a positive integer or absent (no ceiling). */
export const BUDGET_KEYS = [
  "wall_ms",
  "cpu_seconds",
  "memory_bytes",
  "processes",
  "output_bytes",
  "file_size_bytes",
] as const;

const pathList = (what: string) =>
  z.array(z.string()).describe(
    `${what} Absolute, normalized paths; "\${workspace}" and "\${home}" are substituted first.`,
  );

const budget = (what: string) => z.int().positive().optional().describe(`${what} Absent: no ceiling.`);

/** The `fs` table. */
export const FsSchema = z
  .strictObject({
    read: pathList(
      "Host paths readable (files or directory trees). Absent or empty: no host path beyond the " +
        "backend's read-only system binds.",
    ).optional(),
    write: pathList(
      "Host paths writable (needs --ack-unsafe-write when non-empty). Absent or empty: no host writes " +
        "(a private tmpfs /tmp only).",
    ).optional(),
    sockets: pathList(
      "Host unix sockets the program may connect to, e.g. /run/user/1000/bus (needs --ack-host-sockets " +
        "when non-empty). Granting any lets the program create unix sockets, so every host socket it can " +
        "see (under fs.read/fs.write too) becomes reachable. Absent or empty: with network off no unix " +
        "socket can be created at all.",
    ).optional(),
  })
  .describe("Filesystem access beyond the read-only system binds a backend needs to run programs at all.");

/** The `budgets` table. */
export const BudgetsSchema = z
  .strictObject({
    // At most what a timer can wait: a longer ceiling would fire at once.
    wall_ms: z.int().positive().max(MAX_DURATION_MS, DURATION_TOO_LONG).optional().describe(
      `Wall-clock ceiling in milliseconds, at most ${MAX_DURATION_MS}. Absent: no ceiling.`,
    ),
    cpu_seconds: budget("CPU time of the whole process tree in seconds, exited children included."),
    memory_bytes: budget("Memory of the whole process tree in bytes, tmpfs files included."),
    processes: budget("Processes in the whole tree."),
    output_bytes: budget("Output budget in bytes."),
    file_size_bytes: budget("Largest file the program may write, in bytes."),
  })
  .describe("Resource ceilings, positive integers. Absent: no ceiling of that kind.");

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern, "g");
    return true;
  } catch {
    return false; // An invalid pattern is reported as a schema problem naming the field.
  }
}

/** `network: {"allow": [...]}`: the hosts reachable through Specter's proxy, and nothing else. */
export const NetworkAllowSchema = z
  .strictObject({
    // A rule's own length (at most 300 characters) is parseNetRule's to refuse, with its stable code.
    allow: z.array(z.string()).max(MAX_NET_RULES).describe(
      `HOST[:PORT] patterns, at most ${MAX_NET_RULES}: a DNS name (registry.npmjs.org), *. and a domain ` +
        "for its subdomains only (*.pythonhosted.org, not the apex), an IPv4 address or an IPv6 address in " +
        "brackets ([::1]); no port: every port. Not empty; no *, *.TLD, ranges, schemes or paths.",
    ),
  })
  .describe(
    "An allow list: the program reaches only these hosts, through Specter's proxy at 127.0.0.1:3128 (the " +
      "HTTP_PROXY variables point there); no DNS and no direct socket leaves the sandbox. Needs --ack-network.",
  );

/** The `replay` table: how `specter replay` normalizes runs under this policy (flags override it). */
export const ReplaySettingsSchema = z
  .strictObject({
    normalize: z.union([
      z.enum(["all", "none"]),
      z.array(z.enum(FILTER_NAMES as [FilterName, ...FilterName[]])),
    ]).describe(
      'Built-in filters a replay applies: "all", "none" or a list of names. Absent: all.',
    ).optional(),
    redactions: z.array(z.strictObject({
      pattern: z.string().min(1).refine(compiles).describe("A regular expression (applied globally)"),
      replacement: z.string().describe("What replaces each match"),
    })).describe(
      "Regex redactions a replay applies after the filters, as well as the scenario's. Absent or empty: none.",
    ).optional(),
  })
  .describe("Replay normalization defaults; the --strict and --normalize flags override them.");

/** A policy file (JSON or TOML), version 1. Every key except `version` is optional; unknown keys fail. */
export const PolicyFileSchema = z
  .strictObject({
    version: z.literal(POLICY_VERSION).describe("Policy format version; must be 1."),
    exec: pathList(
      "Programs, or directories whose programs, may execute. Absent or empty: only the target program " +
        "itself.",
    ).optional(),
    fs: FsSchema.optional(),
    env: z
      .array(z.string().regex(ENV_NAME_PATTERN))
      .describe(
        "Names of environment variables passed through from the caller (values are never logged). Absent " +
          "or empty: only the minimal default environment.",
      )
      .optional(),
    network: z.union([z.enum(NETWORK_MODES), NetworkAllowSchema]).describe(
      '"off", "on" or {"allow": [HOST[:PORT], …]}; "on" and an allow list need --ack-network. Absent: "off".',
    ).optional(),
    budgets: BudgetsSchema.optional(),
    replay: ReplaySettingsSchema.optional(),
  })
  .describe("A Specter sandbox policy (deny by default).");

/** A policy file as parsed (before variables are substituted and paths are checked). */
export type PolicyFile = z.infer<typeof PolicyFileSchema>;
