/**
 * Checking a prepared sandbox's mount table against its launch plan, before the program runs.
 *
 * Descriptors guarantee *what* is mounted; where a bind lands is still a path bwrap creates, and a path
 * inside a writable host directory can be swapped by whoever writes there. So the table is read from
 * `/proc/<pid>/mountinfo` of the waiting sandbox and every bind must sit at its destination with the
 * opened inode's identity and the planned access, and every writable mount must be one the plan grants
 * (a write grant, the scratch tmpfs, `/proc`, bwrap's device nodes). Anything else refuses the run.
 *
 * @module
 */
import type { PlanDescriptor } from "./launch_plan.ts";

/** One line of `mountinfo` (proc(5)). */
export interface MountEntry {
  /** Mount point as the sandbox sees it. */
  readonly mountPoint: string;
  /** Per-mount options: `rw` or `ro` first. */
  readonly writable: boolean;
  /** Filesystem type (`tmpfs`, `proc`, `ext4`, …). */
  readonly fsType: string;
  /** The optional fields: propagation (`shared:N`, `master:N`, `unbindable`), empty for a private mount. */
  readonly propagation: readonly string[];
}

/** Writable mounts bwrap's own layout makes: type and mount point. */
export const WRITABLE_SYSTEM_MOUNTS = [
  ["tmpfs", "/tmp"],
  ["tmpfs", "/dev/shm"],
  ["proc", "/proc"],
  ["devpts", "/dev/pts"],
  // bwrap binds the terminal it runs on (our PTY's slave) as the console.
  ["devpts", "/dev/console"],
] as const;

/** Device nodes bwrap's `--dev` binds read-write from the host (must be character devices). */
export const WRITABLE_DEVICE_NODES = [
  "/dev/null",
  "/dev/zero",
  "/dev/full",
  "/dev/random",
  "/dev/urandom",
  "/dev/tty",
] as const;

/** Decodes mountinfo's octal escapes (`\040` for a space, `\011`, `\012`, `\134`). */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** Parses `/proc/<pid>/mountinfo`; malformed lines are returned as problems by {@link checkMounts}. */
export function parseMountInfo(text: string): (MountEntry | null)[] {
  return text.split("\n").filter((line) => line !== "").map((line) => {
    const fields = line.split(" ");
    const dash = fields.indexOf("-", 6);
    if (fields.length < 10 || dash < 0 || dash + 1 >= fields.length) return null;
    const options = fields[5]!.split(",");
    return {
      mountPoint: unescape(fields[4]!),
      writable: options.includes("rw"),
      fsType: fields[dash + 1]!,
      propagation: fields.slice(6, dash),
    };
  });
}

/** What the check learns about the inode at a destination inside the sandbox (`null`: none there). */
export type Inspect = (dest: string) => { readonly identity: string; readonly kind: string } | null;

/**
 * The problems with `entries` for a plan's `descriptors` (empty: the sandbox is as planned). `inspect`
 * looks at the sandbox's own view of a destination, without following links.
 */
export function checkMounts(
  entries: readonly (MountEntry | null)[],
  descriptors: readonly PlanDescriptor[],
  inspect: Inspect,
): string[] {
  const problems: string[] = [];
  if (entries.some((entry) => entry === null)) {
    problems.push("The mount table has a line that does not parse");
  }
  const mounts = entries.filter((entry): entry is MountEntry => entry !== null);
  // The topmost mount at a point is the last one listed there.
  const top = new Map<string, MountEntry>();
  for (const entry of mounts) top.set(entry.mountPoint, entry);

  // Binds are applied in plan order: at a destination bound twice (a workspace both read and written)
  // the last one is on top.
  const planned = new Map<string, PlanDescriptor>();
  for (const d of descriptors) planned.set(d.dest, d);
  for (const d of planned.values()) {
    const mount = top.get(d.dest);
    if (mount === undefined) {
      problems.push(`The ${d.purpose} bind of "${d.path}" is not mounted at "${d.dest}"`);
      continue;
    }
    if (mount.writable !== d.writable) {
      problems.push(`"${d.dest}" is mounted ${mount.writable ? "read-write" : "read-only"}, not as planned`);
    }
    const found = inspect(d.dest);
    if (found === null || found.identity !== d.identity) {
      problems.push(`"${d.dest}" does not hold the opened "${d.path}" (${d.identity})`);
    }
  }

  const writableDests = new Set(descriptors.filter((d) => d.writable).map((d) => d.dest));
  for (const entry of mounts) {
    if (!entry.writable || writableDests.has(entry.mountPoint)) continue;
    if (WRITABLE_SYSTEM_MOUNTS.some(([type, at]) => type === entry.fsType && at === entry.mountPoint)) {
      continue;
    }
    if ((WRITABLE_DEVICE_NODES as readonly string[]).includes(entry.mountPoint)) {
      // bwrap binds these from the host's devtmpfs; anything else there must be a character device.
      if (entry.fsType === "devtmpfs" || inspect(entry.mountPoint)?.kind === "char") continue;
    }
    problems.push(`A writable ${entry.fsType} mount at "${entry.mountPoint}" is not granted`);
  }
  return problems;
}
