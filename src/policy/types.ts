/**
 * The resolved, frozen policy every sandbox backend consumes. Produced by `loadPolicy`/`checkPolicy`
 * from a preset or a policy file; never constructed by hand outside tests.
 *
 * Deny by default: an absent or empty list allows nothing beyond what the field's doc says.
 *
 * @module
 */
import type { FilterName } from "./normalize.ts";
import type { NetRule } from "./net_allow.ts";

/**
 * Resource ceilings; `null` means no ceiling of that kind. Their names across flags, scenarios and the
 * library are one table in spec/policy.md ("budgets").
 */
export interface Budgets {
  /** Wall-clock ceiling in milliseconds. */
  readonly wall_ms: number | null;
  /** CPU time of the whole process tree in seconds, exited children included. */
  readonly cpu_seconds: number | null;
  /** Memory of the whole process tree in bytes, tmpfs files included. */
  readonly memory_bytes: number | null;
  /** Processes in the whole tree. */
  readonly processes: number | null;
  /** Output budget in bytes (the session's `maxOutputBytes`). */
  readonly output_bytes: number | null;
  /** Largest file the program may write, in bytes (RLIMIT_FSIZE). */
  readonly file_size_bytes: number | null;
}

/** A validated policy. All paths are absolute and normalized, variables already substituted. */
export interface Policy {
  /** Policy format version. */
  readonly version: 1;
  /** Where it came from: `preset:strict`, `preset:basic`, `preset:workspace` or `file:/abs/path`. */
  readonly source: string;
  /**
   * Absolute paths of programs, or of directories whose programs, may execute. Empty: only the target
   * program itself (resolved to an absolute path) may execute.
   */
  readonly exec: readonly string[];
  /** Filesystem access beyond the read-only system binds a backend needs to run programs at all. */
  readonly fs: {
    /** Absolute paths readable (files or directory trees). Empty: no host path beyond the system binds. */
    readonly read: readonly string[];
    /** Absolute paths writable. Empty: no host writes (a private tmpfs `/tmp` only). */
    readonly write: readonly string[];
    /**
     * Host unix sockets bound into the sandbox (needs `--ack-host-sockets`). Absent (never empty) when
     * none: then, with network off, no unix socket can be created. Granting any allows AF_UNIX sockets
     * in general (seccomp cannot see connect()'s address), so any host socket visible through
     * `read`/`write` becomes reachable too.
     */
    readonly sockets?: readonly string[];
  };
  /** Names of environment variables passed through from the caller. Empty: only the minimal default env. */
  readonly env: readonly string[];
  /**
   * `off`: no network namespace access at all. `on`: the host's network. An allow list: only through
   * Specter's proxy, to the hosts and ports its rules name (no DNS or direct socket leaves the sandbox).
   * `on` and an allow list need `--ack-network`.
   */
  readonly network: "off" | "on" | NetworkAllow;
  /** Resource ceilings. */
  readonly budgets: Budgets;
  /** How `specter replay` normalizes runs under this policy (flags override it). */
  readonly replay: ReplaySettings;
}

/** A network allow list: the rules as parsed, in the order written (never empty). */
export interface NetworkAllow {
  /** The rules (`HOST[:PORT]` patterns, see `net_allow.ts`); each keeps its text as written. */
  readonly allow: readonly NetRule[];
}

/** Replay normalization defaults a policy declares. */
export interface ReplaySettings {
  /** Built-in filter names to apply; `null` (absent in the file) means the default, all of them. */
  readonly normalize: readonly FilterName[] | null;
  /** Regex redactions applied after the filters. Empty: none. */
  readonly redactions: readonly { readonly pattern: string; readonly replacement: string }[];
}
