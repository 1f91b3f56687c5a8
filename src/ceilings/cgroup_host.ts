/**
 * Which cgroup hierarchies can hold a session's ceilings, decided from the text of
 * `/proc/self/mountinfo` and `/proc/self/cgroup`. Pure: the files are read by the caller.
 *
 * A ceiling needs one controller: memory → `memory`, processes → `pids`, CPU time → `cpuacct` on
 * cgroup v1 or `cpu` on v2. A controller is bound to one hierarchy at a time: a v1 mount that lists it,
 * or the v2 mount when it is enabled there (v2 is preferred: it is where a delegated host puts it).
 * Session cgroups are created beneath Specter's own cgroup, so limits set above it still hold.
 *
 * @module
 */

/** The cgroup versions. */
export type CgroupVersion = "v1" | "v2";

/** The ceilings a cgroup can enforce. */
export const CGROUP_CEILINGS = ["memory", "processes", "cpu"] as const;
/** A ceiling a cgroup can enforce. */
export type CgroupCeiling = typeof CGROUP_CEILINGS[number];

/** The controller each ceiling needs, per version. */
export const CONTROLLER_OF = {
  memory: { v1: "memory", v2: "memory" },
  processes: { v1: "pids", v2: "pids" },
  cpu: { v1: "cpuacct", v2: "cpu" },
} as const satisfies Record<CgroupCeiling, Record<CgroupVersion, string>>;

/** A cgroup filesystem mount. */
export interface CgroupMount {
  readonly version: CgroupVersion;
  /** Where it is mounted. */
  readonly mountPoint: string;
  /** The cgroup at the mount point (`/` unless a sub-tree was bind-mounted). */
  readonly root: string;
  /** v1: the controllers bound to this hierarchy (from its super options); v2: empty. */
  readonly controllers: readonly string[];
}

/** Undoes mountinfo's octal escapes (`\040` for a space, and so on). */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** The cgroup (v1 and v2) mounts listed in a `mountinfo` text. */
export function parseCgroupMounts(mountinfo: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of mountinfo.split("\n")) {
    const dash = line.indexOf(" - ");
    if (dash < 0) continue;
    const before = line.slice(0, dash).split(" ");
    const after = line.slice(dash + 3).split(" ");
    const [fstype, , superOptions = ""] = after;
    if (before.length < 5 || (fstype !== "cgroup" && fstype !== "cgroup2")) continue;
    const root = unescape(before[3]!);
    const mountPoint = unescape(before[4]!);
    if (fstype === "cgroup2") {
      mounts.push({ version: "v2", mountPoint, root, controllers: [] });
      continue;
    }
    const known = new Set(["rw", "ro", "relatime", "noatime", "nosuid", "nodev", "noexec"]);
    const controllers = superOptions.split(",").filter((o) => o !== "" && !known.has(o) && !o.includes("="));
    mounts.push({ version: "v1", mountPoint, root, controllers });
  }
  return mounts;
}

/** A process's cgroups (`/proc/PID/cgroup`): v1 paths by controller, and its v2 path (or null). */
export interface ProcCgroups {
  readonly v1: ReadonlyMap<string, string>;
  readonly v2: string | null;
}

/** Parses `/proc/PID/cgroup` (`ID:controllers:path` lines; `0::path` is v2). */
export function parseProcCgroup(text: string): ProcCgroups {
  const v1 = new Map<string, string>();
  let v2: string | null = null;
  for (const line of text.split("\n")) {
    const first = line.indexOf(":");
    const second = line.indexOf(":", first + 1);
    if (first < 0 || second < 0) continue;
    const controllers = line.slice(first + 1, second);
    const path = line.slice(second + 1);
    if (line.slice(0, first) === "0" && controllers === "") {
      v2 = path;
      continue;
    }
    for (const name of controllers.split(",")) if (name !== "") v1.set(name, path);
  }
  return { v1, v2 };
}

/** The host directory of cgroup `path` in `mount`, or null when the mount does not show it. */
export function cgroupDir(mount: CgroupMount, path: string): string | null {
  const root = mount.root.replace(/\/+$/, "");
  if (path !== root && !path.startsWith(`${root}/`) && root !== "") return null;
  const rest = path.slice(root.length).replace(/^\/+/, "");
  if (rest.split("/").some((part) => part === "..")) return null;
  const base = mount.mountPoint.replace(/\/+$/, "");
  return rest === "" ? base : `${base}/${rest}`;
}

/** Where a ceiling's controller lives: the directory session cgroups are created beneath. */
export interface Placement {
  readonly version: CgroupVersion;
  readonly controller: string;
  /** Specter's own cgroup directory in that hierarchy (session cgroups go into `<base>/specter/`). */
  readonly base: string;
}

/**
 * Where each ceiling's controller can be used, given the mounts, this process's cgroups and the
 * controllers the v2 hierarchy offers at `base` (its `cgroup.controllers`; empty when unreadable).
 * Ceilings missing from the result have no usable hierarchy (the caller falls back to sampling).
 */
export function placeCeilings(
  mounts: readonly CgroupMount[],
  own: ProcCgroups,
  v2Controllers: readonly string[],
): Map<CgroupCeiling, Placement> {
  const placed = new Map<CgroupCeiling, Placement>();
  const v2 = mounts.find((m) => m.version === "v2");
  const v2Base = v2 === undefined || own.v2 === null ? null : cgroupDir(v2, own.v2);
  for (const ceiling of CGROUP_CEILINGS) {
    const wanted = CONTROLLER_OF[ceiling];
    if (v2Base !== null && v2Controllers.includes(wanted.v2)) {
      placed.set(ceiling, { version: "v2", controller: wanted.v2, base: v2Base });
      continue;
    }
    const mount = mounts.find((m) => m.version === "v1" && m.controllers.includes(wanted.v1));
    const path = own.v1.get(wanted.v1);
    const base = mount === undefined || path === undefined ? null : cgroupDir(mount, path);
    if (base !== null) placed.set(ceiling, { version: "v1", controller: wanted.v1, base });
  }
  return placed;
}

/** Parses a flat-keyed cgroup file (`key value` lines, e.g. `memory.oom_control`, `pids.events`). */
export function parseKeyed(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split("\n")) {
    const match = /^(\S+)\s+(\d+)\s*$/.exec(line);
    if (match) values.set(match[1]!, Number(match[2]));
  }
  return values;
}

/** Parses a single-number cgroup file (`cpuacct.usage`, `pids.current`); `max` is Infinity; NaN if neither. */
export function parseNumber(text: string): number {
  const trimmed = text.trim();
  if (trimmed === "max") return Infinity;
  return /^\d+$/.test(trimmed) ? Number(trimmed) : NaN;
}

/** The name of a session's cgroup: the owning Specter pid first (stale ones are found by it), then a sequence and the id. */
export function sessionCgroupName(ownerPid: number, seq: number, id: string): string {
  return `${ownerPid}-${seq}${idPart(id)}`;
}

/** The id's part of a session cgroup name (`-` and the id made safe, or nothing for an empty id). */
function idPart(id: string): string {
  const safe = id.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 64);
  return safe === "" ? "" : `-${safe}`;
}

/** True when `name` is a cgroup name {@link sessionCgroupName} makes for `ownerPid` and session `id`. */
export function isSessionCgroupName(name: string, ownerPid: number, id: string): boolean {
  const head = `${ownerPid}-`;
  const tail = idPart(id);
  if (!name.startsWith(head) || !name.endsWith(tail) || name.length <= head.length + tail.length) {
    return false;
  }
  return /^\d+$/.test(name.slice(head.length, name.length - tail.length));
}

/** The owning Specter pid of a session cgroup name, or null when the name is not one of ours. */
export function ownerOf(name: string): number | null {
  const match = /^([1-9]\d{0,9})-\d+(?:-|$)/.exec(name);
  return match ? Number(match[1]) : null;
}
