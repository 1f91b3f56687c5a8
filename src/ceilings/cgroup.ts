/**
 * A session's own cgroup: created before the launch, joined by the launcher before the sandbox exists,
 * read for breaches while it runs, emptied and removed after.
 *
 * The kernel holds the ceilings: `memory.limit_in_bytes`/`memory.max` (tmpfs pages are charged to the
 * cgroup of the process that wrote them), `pids.max` (every task, also of detached and `setsid` children),
 * and the cgroup's CPU counter, which includes exited and detached children. cgroup files are written as
 * root and never visible in the sandbox (no `/sys`, its own cgroup namespace), so the program cannot move
 * itself out or raise a limit.
 *
 * @module
 */
import {
  type CgroupCeiling,
  cgroupDir,
  type CgroupMount,
  type CgroupVersion,
  isSessionCgroupName,
  ownerOf,
  parseCgroupMounts,
  parseKeyed,
  parseNumber,
  parseProcCgroup,
  placeCeilings,
  type Placement,
  sessionCgroupName,
} from "./cgroup_host.ts";

/** The parent of every session cgroup inside Specter's own cgroup. */
export const SPECTER_GROUP = "specter";

/**
 * Tasks of the launch itself in the cgroup besides the program's: bwrap outside the sandbox and bwrap
 * as the sandbox's init. `pids.max` is the process budget plus these.
 */
export const LAUNCHER_TASKS = 2;

/** The ceilings to put on a cgroup (`null`: not this one). */
export interface CgroupLimits {
  readonly memoryBytes: number | null;
  readonly processes: number | null;
  readonly cpuSeconds: number | null;
}

/** A ceiling the kernel reports breached. */
export interface CgroupBreach {
  readonly reason: CgroupCeiling;
  readonly limit: number;
  readonly value: number;
}

function read(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return null; // Missing (an older kernel) or the cgroup is gone: treated as "nothing to report".
  }
}

function write(path: string, value: string): void {
  Deno.writeTextFileSync(path, value, { create: false });
}

let hostPlacements: Map<CgroupCeiling, Placement> | null = null;
let sequence = 0;
const swept = new Set<string>();

/** Where each ceiling's controller is usable on this host (read once per process; only as root). */
export function usablePlacements(): Map<CgroupCeiling, Placement> {
  if (hostPlacements !== null) return hostPlacements;
  hostPlacements = new Map();
  if (Deno.build.os !== "linux") return hostPlacements;
  const mountinfo = read("/proc/self/mountinfo");
  const own = read("/proc/self/cgroup");
  if (mountinfo === null || own === null) return hostPlacements;
  const mounts: CgroupMount[] = parseCgroupMounts(mountinfo);
  const procs = parseProcCgroup(own);
  const v2 = mounts.find((m) => m.version === "v2");
  const v2Base = v2 === undefined || procs.v2 === null ? null : cgroupDir(v2, procs.v2);
  const offered = v2Base === null ? [] : (read(`${v2Base}/cgroup.controllers`) ?? "").trim().split(/\s+/);
  for (const [ceiling, placement] of placeCeilings(mounts, procs, offered)) {
    if (prepareParent(placement)) hostPlacements.set(ceiling, placement);
  }
  return hostPlacements;
}

/**
 * Creates `<base>/specter` (v2: with the controller enabled for its children) and removes stale session
 * cgroups left there by Specter processes that are gone. False when the host does not let us.
 */
function prepareParent(placement: Placement): boolean {
  const parent = `${placement.base}/${SPECTER_GROUP}`;
  try {
    Deno.mkdirSync(parent, { mode: 0o755 });
  } catch (error: unknown) {
    if (!(error instanceof Deno.errors.AlreadyExists)) return false;
  }
  if (placement.version === "v2") {
    try {
      const enabled = (read(`${placement.base}/cgroup.subtree_control`) ?? "").split(/\s+/);
      if (!enabled.includes(placement.controller)) {
        write(`${placement.base}/cgroup.subtree_control`, `+${placement.controller}`);
      }
      write(`${parent}/cgroup.subtree_control`, `+${placement.controller}`);
    } catch {
      return false; // Not delegated to us (or the parent holds processes): this controller is unusable.
    }
  }
  if (!canCreateIn(parent)) return false;
  if (!swept.has(parent)) {
    swept.add(parent);
    sweepStale(parent);
  }
  return true;
}

/**
 * Whether this process may create a session cgroup under `parent`, found out by creating and removing one
 * (sequence 0, never a session's; a crash between the two leaves a directory the stale sweep removes). A
 * parent made by another user (root's, seen by a later unprivileged run) exists but refuses children: it
 * must not count as usable, or the plan drops the RLIMIT_NPROC backstop for a cgroup that never comes.
 */
function canCreateIn(parent: string): boolean {
  const probe = `${parent}/${sessionCgroupName(Deno.pid, 0, "")}`;
  try {
    Deno.mkdirSync(probe);
  } catch (error: unknown) {
    if (!(error instanceof Deno.errors.AlreadyExists)) return false;
  }
  try {
    Deno.removeSync(probe);
  } catch {
    // A probe that cannot be removed at once (it holds no task): the sweep of a later run takes it.
  }
  return true;
}

function alive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT"); // Harmless to a running process; only ESRCH matters here.
    return true;
  } catch (error: unknown) {
    return !(error instanceof Deno.errors.NotFound);
  }
}

/** Best effort: empties and removes session cgroups whose Specter process is gone (a crashed run). */
function sweepStale(parent: string): void {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(parent)];
  } catch {
    return; // Unreadable: nothing to sweep.
  }
  for (const entry of entries) {
    const owner = ownerOf(entry.name);
    if (!entry.isDirectory || owner === null || owner === Deno.pid || alive(owner)) continue;
    const dir = `${parent}/${entry.name}`;
    killMembers([dir]);
    removeDirs([dir]);
  }
}

/** The pids listed in each directory's `cgroup.procs`. */
function members(dirs: readonly string[]): number[] {
  const pids = new Set<number>();
  for (const dir of dirs) {
    for (const line of (read(`${dir}/cgroup.procs`) ?? "").split("\n")) {
      if (/^\d+$/.test(line)) pids.add(Number(line));
    }
  }
  return [...pids];
}

/** SIGKILLs every listed member once; returns how many were listed. */
function killMembers(dirs: readonly string[]): number {
  const pids = members(dirs);
  for (const pid of pids) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // Gone since the listing.
    }
  }
  return pids.length;
}

/** Removes each directory; returns those that could not be removed yet (still holding tasks). */
function removeDirs(dirs: readonly string[]): string[] {
  const left: string[] = [];
  for (const dir of dirs) {
    try {
      Deno.removeSync(dir);
    } catch (error: unknown) {
      if (!(error instanceof Deno.errors.NotFound)) left.push(dir);
    }
  }
  return left;
}

/** Where one ceiling of a session is enforced. */
export interface SessionCgroupPlacement {
  readonly ceiling: CgroupCeiling;
  readonly dir: string;
  readonly version: CgroupVersion;
}

/** A session's cgroups, one directory per hierarchy in use. */
export class SessionCgroup {
  /** The version enforcing each ceiling this cgroup holds. */
  readonly versions: ReadonlyMap<CgroupCeiling, CgroupVersion>;
  readonly #dirs: ReadonlyMap<CgroupCeiling, string>;
  readonly #all: readonly string[];
  readonly #limits: CgroupLimits;
  #left: string[] = [];

  private constructor(
    dirs: Map<CgroupCeiling, string>,
    versions: Map<CgroupCeiling, CgroupVersion>,
    limits: CgroupLimits,
  ) {
    this.#dirs = dirs;
    this.versions = versions;
    this.#limits = limits;
    this.#all = [...new Set(dirs.values())];
  }

  /**
   * Creates the cgroups of a session for the ceilings set in `limits` whose controller is usable (root
   * only). Ceilings that could not be placed are simply absent from `versions`; null when none could.
   */
  static create(
    id: string,
    limits: CgroupLimits,
    placements = usablePlacements(),
    owner: number = Deno.pid,
  ): SessionCgroup | null {
    const wanted: [CgroupCeiling, number | null][] = [
      ["memory", limits.memoryBytes],
      ["processes", limits.processes],
      ["cpu", limits.cpuSeconds],
    ];
    // Named after its owner: a stale sweep (any Specter process's) empties it only once the owner is gone.
    // Owned by another process, the creator's pid goes into the sequence: two daemons in turn on one
    // keeper never make the same name.
    const seq = owner === Deno.pid ? ++sequence : Deno.pid * 1_000_000 + ++sequence;
    const name = sessionCgroupName(owner, seq, id);
    const dirs = new Map<CgroupCeiling, string>();
    const versions = new Map<CgroupCeiling, CgroupVersion>();
    const created: string[] = [];
    for (const [ceiling, limit] of wanted) {
      const placement = placements.get(ceiling);
      if (limit === null || placement === undefined) continue;
      const dir = `${placement.base}/${SPECTER_GROUP}/${name}`;
      try {
        if (!created.includes(dir)) {
          Deno.mkdirSync(dir, { mode: 0o755 });
          created.push(dir);
        }
        applyLimit(ceiling, placement.version, dir, limit);
      } catch {
        continue; // This ceiling stays with the sampler (the audit says so); the others keep their cgroup.
      }
      dirs.set(ceiling, dir);
      versions.set(ceiling, placement.version);
    }
    removeDirs(created.filter((dir) => ![...dirs.values()].includes(dir)));
    return dirs.size === 0 ? null : new SessionCgroup(dirs, versions, limits);
  }

  /**
   * Moves `pids` into every cgroup of the session. Called at the launch gate, while bwrap holds its
   * sandbox before the program's first instruction: bwrap and its sandbox's init are then the only
   * processes of the launch, and neither forks before it is released, so nothing escapes. Throws when a
   * write fails (the launch is refused, never run outside its ceilings).
   */
  join(pids: readonly number[]): void {
    for (const dir of this.#all) {
      for (const pid of pids) Deno.writeTextFileSync(`${dir}/cgroup.procs`, `${pid}\n`);
    }
  }

  /** True when `pid` is listed in every cgroup of the session. */
  holds(pid: number): boolean {
    return this.#all.every((dir) => members([dir]).includes(pid));
  }

  /** The first ceiling the kernel reports breached, or null. */
  breach(): CgroupBreach | null {
    for (const [ceiling, dir] of this.#dirs) {
      const version = this.versions.get(ceiling)!;
      const breach = check(ceiling, version, dir, this.#limits);
      if (breach !== null) return breach;
    }
    return null;
  }

  /** Where each ceiling's cgroup is (saved by a daemon, so that its successor can take it back). */
  get placements(): SessionCgroupPlacement[] {
    return [...this.#dirs].map(([ceiling, dir]) => ({ ceiling, dir, version: this.versions.get(ceiling)! }));
  }

  /**
   * The cgroups of session `id`, which another process created and `owner` still holds (a session a
   * restarted daemon takes back from its keeper). Each must be that session's cgroup of `owner` in this
   * host's Specter group for its controller, and hold `pid` (the launch's process, joined at its gate);
   * the others are left out (their ceilings are then sampled).
   */
  static reopen(
    saved: readonly SessionCgroupPlacement[],
    limits: CgroupLimits,
    owner: number,
    id: string,
    pid: number,
    placements = usablePlacements(),
  ): SessionCgroup | null {
    const dirs = new Map<CgroupCeiling, string>();
    const versions = new Map<CgroupCeiling, CgroupVersion>();
    for (const { ceiling, dir, version } of saved) {
      const placement = placements.get(ceiling);
      if (placement === undefined || placement.version !== version) continue;
      const parent = `${placement.base}/${SPECTER_GROUP}/`;
      const name = dir.slice(parent.length);
      // Bytes on disk do not name what to kill: only a session cgroup of this owner, in our own group.
      if (!dir.startsWith(parent) || !isSessionCgroupName(name, owner, id)) continue;
      try {
        if (!Deno.statSync(dir).isDirectory) continue;
      } catch {
        continue; // Gone (the session ended and it was removed).
      }
      // Another session's cgroup (a stale or swapped session.json) would be killed with this one: only a
      // cgroup its own process is in is taken.
      if (!members([dir]).includes(pid)) continue;
      dirs.set(ceiling, dir);
      versions.set(ceiling, version);
    }
    return dirs.size === 0 ? null : new SessionCgroup(dirs, versions, limits);
  }

  /** Pids still in the session's cgroups. */
  members(): number[] {
    return members(this.#all);
  }

  /** SIGKILLs every process in the session's cgroups; returns how many there were. */
  kill(): number {
    return killMembers(this.#all);
  }

  /**
   * Kills what is left and removes the directories (retried a few times while tasks die). Returns
   * true when all are gone; those left are retried by the next call (and by stale sweeps after us).
   */
  remove(attempts = 200): boolean {
    let left = this.#left.length > 0 ? this.#left : [...this.#all];
    for (let i = 0; i < attempts && left.length > 0; i++) {
      killMembers(left);
      left = removeDirs(left);
      if (left.length > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    }
    this.#left = left;
    return left.length === 0;
  }
}

function applyLimit(ceiling: CgroupCeiling, version: CgroupVersion, dir: string, limit: number): void {
  switch (ceiling) {
    case "memory":
      if (version === "v1") {
        write(`${dir}/memory.limit_in_bytes`, String(limit));
        // Swap must not extend the budget (memsw is memory plus swap; absent without swap accounting).
        if (read(`${dir}/memory.memsw.limit_in_bytes`) !== null) {
          write(`${dir}/memory.memsw.limit_in_bytes`, String(limit));
        }
        // No kernel OOM kill of one process: the whole tree stalls at the limit, Specter sees `under_oom`
        // and kills every process of the session with capsule_kill (memory).
        write(`${dir}/memory.oom_control`, "1");
      } else {
        write(`${dir}/memory.max`, String(limit));
        if (read(`${dir}/memory.swap.max`) !== null) write(`${dir}/memory.swap.max`, "0");
        if (read(`${dir}/memory.oom.group`) !== null) write(`${dir}/memory.oom.group`, "1");
      }
      return;
    case "processes":
      write(`${dir}/pids.max`, String(limit + LAUNCHER_TASKS));
      return;
    case "cpu":
      return; // Accounted only: the counter is compared with the budget as it grows.
  }
}

function check(
  ceiling: CgroupCeiling,
  version: CgroupVersion,
  dir: string,
  limits: CgroupLimits,
): CgroupBreach | null {
  switch (ceiling) {
    case "memory": {
      const limit = limits.memoryBytes!;
      if (version === "v1") {
        const oom = parseKeyed(read(`${dir}/memory.oom_control`) ?? "");
        if ((oom.get("under_oom") ?? 0) === 0 && (oom.get("oom_kill") ?? 0) === 0) return null;
        return {
          reason: "memory",
          limit,
          value: parseNumber(read(`${dir}/memory.max_usage_in_bytes`) ?? "") || limit,
        };
      }
      const events = parseKeyed(read(`${dir}/memory.events`) ?? "");
      if ((events.get("oom") ?? 0) === 0 && (events.get("oom_kill") ?? 0) === 0) return null;
      const peak = parseNumber(read(`${dir}/memory.peak`) ?? read(`${dir}/memory.current`) ?? "");
      return { reason: "memory", limit, value: Number.isFinite(peak) ? peak : limit };
    }
    case "processes": {
      const limit = limits.processes!;
      const refused = parseKeyed(read(`${dir}/pids.events`) ?? "").get("max") ?? 0;
      if (refused === 0) return null;
      // The kernel refused a fork: the tree tried to have one more process than its budget.
      return { reason: "processes", limit, value: limit + 1 };
    }
    case "cpu": {
      const limit = limits.cpuSeconds!;
      const seconds = version === "v1"
        ? parseNumber(read(`${dir}/cpuacct.usage`) ?? "") / 1e9
        : (parseKeyed(read(`${dir}/cpu.stat`) ?? "").get("usage_usec") ?? NaN) / 1e6;
      if (!(seconds >= limit)) return null;
      return { reason: "cpu", limit, value: Math.round(seconds * 1000) / 1000 };
    }
  }
}
