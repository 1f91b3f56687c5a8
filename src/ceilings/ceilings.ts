/**
 * A session's resource ceilings and the mechanism that enforces each: the session's own cgroup where
 * the host allows it, otherwise a sampler over the sandbox's pid namespace (or, without a sandbox, over
 * the terminal's session). Rlimits set by the launcher stay as per-process backstops.
 *
 * @module
 */
import { CEILING_MECHANISMS } from "../protocol/mod.ts";
import { treeUsage } from "../pty/mod.ts";
import type { CgroupCeiling } from "./cgroup_host.ts";
import { type CgroupLimits, SessionCgroup, type SessionCgroupPlacement, usablePlacements } from "./cgroup.ts";
import { namespaceMembers, pidNamespace, usageOf } from "./pidns_usage.ts";

/** The mechanisms that can enforce a ceiling (recorded per ceiling in the audit log). */
export const MECHANISMS = CEILING_MECHANISMS;
/** A mechanism enforcing a ceiling. */
export type Mechanism = typeof MECHANISMS[number];

/** The ceilings a session can have, as the audit log names them. */
export type CeilingName = "memory" | "cpu" | "processes" | "file_size";

/** Which mechanism enforces each ceiling that is set (`null`: the ceiling is not set). */
export type EnforcedBy = Readonly<Record<CeilingName, Mechanism | null>>;

/** A breached ceiling, as the `capsule_kill` frame reports it. */
export interface Breach {
  readonly reason: CgroupCeiling;
  readonly limit: number;
  readonly value: number;
  readonly enforcedBy: Mechanism;
}

/** The session's ceilings (`null`: none of that kind). */
export interface CeilingLimits extends CgroupLimits {
  readonly fileSizeBytes: number | null;
}

/** Where cgroups may be used: `auto` (when the host allows), `off` (tests of the fallback; audited). */
export type CgroupMode = "auto" | "off";

/**
 * The mechanism for each ceiling, given which ceilings a cgroup holds (pure: the choice the audit
 * records). `sandboxed`: the program runs in its own pid namespace (bwrap), so the fallback can find
 * every process of it.
 */
export function chooseMechanisms(
  limits: CeilingLimits,
  cgroup: ReadonlyMap<CgroupCeiling, "v1" | "v2">,
  sandboxed: boolean,
): EnforcedBy {
  const sampler: Mechanism = sandboxed ? "pidns-sampler" : "session-sampler";
  const of = (ceiling: CgroupCeiling, limit: number | null): Mechanism | null => {
    if (limit === null) return null;
    const version = cgroup.get(ceiling);
    return version === undefined ? sampler : `cgroup-${version}`;
  };
  return {
    memory: of("memory", limits.memoryBytes),
    cpu: of("cpu", limits.cpuSeconds),
    processes: of("processes", limits.processes),
    file_size: limits.fileSizeBytes === null ? null : "rlimit",
  };
}

/**
 * True when a sandboxed session here gets a cgroup for `ceiling` (the host offers its controller and
 * Specter may create cgroups): then the kernel enforces it on the whole tree and no rlimit backstop is
 * needed for it. Deterministic per host, so a rendered plan equals the run's.
 */
export function kernelEnforces(ceiling: CgroupCeiling, mode: CgroupMode = "auto"): boolean {
  return mode === "auto" && Deno.build.os === "linux" && usablePlacements().has(ceiling);
}

/** A session's ceilings while it runs. */
export class Ceilings {
  /** Which mechanism enforces each ceiling. */
  readonly enforcedBy: EnforcedBy;
  readonly #limits: CeilingLimits;
  readonly #cgroup: SessionCgroup | null;
  readonly #sandboxed: boolean;
  #namespace: string | null = null;

  private constructor(limits: CeilingLimits, cgroup: SessionCgroup | null, sandboxed: boolean) {
    this.#limits = limits;
    this.#cgroup = cgroup;
    this.#sandboxed = sandboxed;
    this.enforcedBy = chooseMechanisms(limits, cgroup?.versions ?? new Map(), sandboxed);
  }

  /**
   * The ceilings of session `id`. A sandboxed session (its own pid namespace) as root gets its own
   * cgroup for every ceiling whose controller the host offers; the rest are sampled. `owner`: the process
   * whose life the cgroup is tied to (see `SessionCgroup.create`).
   */
  static create(
    id: string,
    limits: CeilingLimits,
    sandboxed: boolean,
    mode: CgroupMode = "auto",
    owner: number = Deno.pid,
  ): Ceilings {
    const wanted = limits.memoryBytes !== null || limits.processes !== null || limits.cpuSeconds !== null;
    // Only a sandbox can be launched through the join step before its first instruction; whether the
    // host lets us create cgroups (root, or a delegated v2 subtree) is found out by trying.
    const usable = sandboxed && wanted && mode === "auto" && Deno.build.os === "linux";
    return new Ceilings(
      limits,
      usable ? SessionCgroup.create(id, limits, undefined, owner) : null,
      sandboxed,
    );
  }

  /**
   * The ceilings of session `id`, which another process launched and `owner.pid` holds (a daemon taking a
   * session back from its keeper): its cgroups as `saved` (see {@link cgroups}) where they check out (each
   * must hold `owner.launched`, the launch's process), the sampler for the rest, over the pid namespace of
   * `initPid` (the sandbox's first process) when sandboxed.
   */
  static resume(
    id: string,
    limits: CeilingLimits,
    sandboxed: boolean,
    saved: readonly SessionCgroupPlacement[],
    owner: { readonly pid: number; readonly launched: number },
    initPid: number | null,
  ): Ceilings {
    const cgroup = SessionCgroup.reopen(saved, limits, owner.pid, id, owner.launched);
    const ceilings = new Ceilings(limits, cgroup, sandboxed);
    if (sandboxed && initPid !== null) ceilings.attach(initPid);
    return ceilings;
  }

  /** Where the session's cgroups are (none without). */
  get cgroups(): SessionCgroupPlacement[] {
    return this.#cgroup?.placements ?? [];
  }

  /** True when any of memory, CPU or processes is set (the ones watched while the session runs). */
  get watched(): boolean {
    return Object.entries(this.enforcedBy).some(([name, by]) => name !== "file_size" && by !== null);
  }

  /** Moves the launch's processes (bwrap, its held sandbox init) into the session's cgroups, if any. */
  join(pids: readonly number[]): void {
    this.#cgroup?.join(pids);
  }

  /** True when `pid` (a process of the launch) is inside the session's cgroups (or there are none). */
  holds(pid: number): boolean {
    return this.#cgroup === null || this.#cgroup.holds(pid);
  }

  /** The sandbox's first process exists: its pid namespace is the one the fallback samples. */
  attach(initPid: number): void {
    this.#namespace = pidNamespace(initPid);
  }

  /**
   * Measures once. `sessionPid`: the terminal's session (the fallback without a sandbox). Returns the
   * first ceiling breached, or null.
   */
  check(sessionPid: number): Breach | null {
    const kernel = this.#cgroup?.breach() ?? null;
    if (kernel !== null) {
      return { ...kernel, enforcedBy: this.enforcedBy[kernel.reason]! };
    }
    const sampled = (["memory", "cpu", "processes"] as const).filter((c) =>
      this.enforcedBy[c] === "pidns-sampler" || this.enforcedBy[c] === "session-sampler"
    );
    if (sampled.length === 0) return null;
    const usage = this.#sandboxed
      ? (this.#namespace === null ? null : usageOf(namespaceMembers(this.#namespace)))
      : treeUsage(sessionPid);
    if (usage === null) return null;
    const { memoryBytes, cpuSeconds, processes } = this.#limits;
    const by = (c: CgroupCeiling) => this.enforcedBy[c]!;
    if (sampled.includes("memory") && usage.rssBytes > memoryBytes!) {
      return { reason: "memory", limit: memoryBytes!, value: usage.rssBytes, enforcedBy: by("memory") };
    }
    if (sampled.includes("cpu") && usage.cpuSeconds >= cpuSeconds!) {
      return { reason: "cpu", limit: cpuSeconds!, value: usage.cpuSeconds, enforcedBy: by("cpu") };
    }
    if (sampled.includes("processes") && usage.processes >= processes!) {
      return { reason: "processes", limit: processes!, value: usage.processes, enforcedBy: by("processes") };
    }
    return null;
  }

  /**
   * SIGKILLs every process of the session's cgroups (detached ones too); returns how many there were.
   * Without a cgroup nothing is needed here: killing the sandbox's init ends its whole pid namespace.
   */
  kill(): number {
    return this.#cgroup?.kill() ?? 0;
  }

  /** Processes still in the session's cgroups (the sweep before `exit` waits for none). */
  remaining(): number {
    return this.#cgroup?.members().length ?? 0;
  }

  /** Kills what is left and removes the cgroups (best effort; stale ones are swept by later runs). */
  close(): boolean {
    return this.#cgroup?.remove() ?? true;
  }
}
