/**
 * The fallback where no cgroup is usable: the sandbox's processes are found by their pid namespace
 * (`/proc/PID/ns/pid` names the same namespace as the sandbox's init), so a program that `setsid`s or
 * double-forks is still counted: it cannot leave its pid namespace. CPU time counts each live process's
 * own time and the time of the children it reaped (`cutime`/`cstime`): a child that exited is counted
 * in its parent, and at the latest in the namespace's init, which reaps every orphan.
 *
 * Limits of sampling (documented in docs/security.md): a peak between two samples can pass unseen;
 * children of a parent that ignores SIGCHLD are reaped without their time being added anywhere; tmpfs
 * pages are not resident memory of any process (the scratch tmpfs mounts are sized instead).
 *
 * @module
 */

/** USER_HZ: the unit of the times in `/proc/PID/stat`, 100 on every Linux architecture. */
const USER_HZ = 100;

/** Fields of `/proc/PID/stat` the sampler needs. */
export interface StatFields {
  readonly state: string;
  /** Own CPU time and reaped children's, in clock ticks. */
  readonly utime: number;
  readonly stime: number;
  readonly cutime: number;
  readonly cstime: number;
}

/** Parses `/proc/PID/stat` (the command name may hold spaces and parentheses: fields follow the last `)`). */
export function parseStat(text: string): StatFields | null {
  const close = text.lastIndexOf(")");
  if (close < 0) return null;
  const fields = text.slice(close + 2).trim().split(" ");
  // After "(comm)": state [0], utime [11], stime [12], cutime [13], cstime [14].
  if (fields.length < 15) return null;
  const number = (i: number) => Number(fields[i]);
  const parsed = {
    state: fields[0]!,
    utime: number(11),
    stime: number(12),
    cutime: number(13),
    cstime: number(14),
  };
  return [parsed.utime, parsed.stime, parsed.cutime, parsed.cstime].every(Number.isFinite) ? parsed : null;
}

/** The pid namespace of `pid` (`pid:[inode]`), or null when it is gone or not ours to read. */
export function pidNamespace(pid: number): string | null {
  try {
    return Deno.readLinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return null; // Exited, or not readable by us.
  }
}

/** Every pid (host numbering) whose pid namespace is `namespace`. */
export function namespaceMembers(namespace: string): number[] {
  const pids: number[] = [];
  let entries: Iterable<Deno.DirEntry>;
  try {
    entries = Deno.readDirSync("/proc");
  } catch {
    return pids; // No /proc: nothing can be measured.
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry.name)) continue;
    const pid = Number(entry.name);
    if (pidNamespace(pid) === namespace) pids.push(pid);
  }
  return pids;
}

/** What the namespace's processes use now. */
export interface NamespaceUsage {
  readonly processes: number;
  readonly rssBytes: number;
  readonly cpuSeconds: number;
}

/** Sums resident memory, processes and CPU time (own + reaped children) over `pids`. */
export function usageOf(pids: readonly number[]): NamespaceUsage {
  let processes = 0;
  let rssBytes = 0;
  let ticks = 0;
  for (const pid of pids) {
    let stat: StatFields | null;
    let status: string;
    try {
      stat = parseStat(Deno.readTextFileSync(`/proc/${pid}/stat`));
      status = Deno.readTextFileSync(`/proc/${pid}/status`);
    } catch {
      continue; // Exited since the scan: its time is now in its parent's cutime.
    }
    if (stat === null) continue;
    processes++;
    ticks += stat.utime + stat.stime + stat.cutime + stat.cstime;
    rssBytes += Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? 0) * 1024; // Absent for zombies.
  }
  return { processes, rssBytes, cpuSeconds: ticks / USER_HZ };
}
