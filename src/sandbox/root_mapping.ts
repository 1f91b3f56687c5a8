/**
 * Root mode: the host uid root's sandboxes run as, the user namespace that maps it for idmapped mounts, and
 * the realization's descriptors swapped for attached clones (`mount_attachments.ts`).
 *
 * Started by root, bwrap runs through `setpriv --reuid=UID --regid=UID`: the sandbox's user namespace maps
 * its uid 65534 to UID, a uid of its own (one fixed uid of a range no account, group or subordinate-id range
 * has), so no host service shares it (0.6's `nobody` did) and none of the kernel's special cases for uid 0
 * apply (sysctls, device nodes, leases, per-user limits, peer checks). What the program reads or writes
 * (grants, protections, the persistent layer) is bound through idmapped mounts that show root's files as
 * UID's and store UID's writes as root's.
 *
 * @module
 */
import { SandboxError } from "../errors.ts";
import { systemTreeOf } from "../fsafe/mod.ts";
import { cString, MOUNT, mountApi } from "./_mount_api.ts";
import type { MountAttachments } from "./mount_attachments.ts";
import type { OpenedPath, RealizedPolicy } from "./realize.ts";

/**
 * The range root's sandbox uid comes from: above every account, the usual subordinate ranges (from 100000)
 * and systemd's container range (up to 1879048191), below 2^31 and systemd's foreign range (2147352576).
 */
export const ROOT_SANDBOX_UIDS = { first: 1_900_000_000, count: 200_000_000 } as const;

/** Where in the range the uid is: fixed, away from its round numbers. */
const FIXED_OFFSET = 34_059_871;

let chosen: number | undefined;

/**
 * The host uid root's sandboxes run as: one fixed uid of the range (the same in every Specter process, so a
 * plan and its hashes are the same in `policy render` and in the run), moved on past any uid or gid an
 * account, a group or a subordinate range (`/etc/passwd`, `/etc/group`, `/etc/subuid`, `/etc/subgid`) has.
 */
export function rootSandboxUid(): number {
  if (chosen !== undefined) return chosen;
  const taken = idsTaken();
  let uid = ROOT_SANDBOX_UIDS.first + FIXED_OFFSET;
  while (taken(uid)) {
    uid = ROOT_SANDBOX_UIDS.first + (uid - ROOT_SANDBOX_UIDS.first + 1) % ROOT_SANDBOX_UIDS.count;
  }
  return chosen = uid;
}

/** Whether an id is an account's, a group's, or in a subordinate range. */
function idsTaken(): (id: number) => boolean {
  const single = new Set<number>();
  const ranges: [number, number][] = [];
  for (const file of ["/etc/passwd", "/etc/group"]) {
    for (const line of lines(file)) {
      const id = Number(line.split(":")[2]);
      if (Number.isInteger(id)) single.add(id);
    }
  }
  for (const file of ["/etc/subuid", "/etc/subgid"]) {
    for (const line of lines(file)) {
      const [, start, count] = line.split(":").map(Number);
      if (Number.isInteger(start) && Number.isInteger(count)) ranges.push([start!, start! + count!]);
    }
  }
  return (id) => single.has(id) || ranges.some(([from, to]) => id >= from && id < to);
}

function lines(path: string): string[] {
  try {
    return Deno.readTextFileSync(path).split("\n");
  } catch {
    return []; // No such file: nothing is named there.
  }
}

let mapping: { uid: number; fd: number } | undefined;

/**
 * A user namespace mapping its uid and gid 0 to `uid`, for idmapped mounts (held open for the process's
 * life): made by a helper `unshare --user sleep`, whose maps root writes, then killed.
 */
export function idmapNamespace(uid: number): number {
  if (mapping?.uid === uid) return mapping.fd;
  let helper: Deno.ChildProcess | undefined;
  try {
    helper = new Deno.Command("unshare", {
      args: ["--user", "sleep", "60"],
      stdin: "null",
      stdout: "null",
      stderr: "null",
      clearEnv: true,
    }).spawn();
    const own = Deno.readLinkSync("/proc/self/ns/user");
    const deadline = Date.now() + 5_000;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    // unshare has made its namespace once its /proc entry shows another one.
    while (Deno.readLinkSync(`/proc/${helper.pid}/ns/user`) === own) {
      if (Date.now() > deadline) throw new Error("the helper did not make its user namespace");
      Atomics.wait(pause, 0, 0, 1);
    }
    Deno.writeTextFileSync(`/proc/${helper.pid}/uid_map`, `0 ${uid} 1\n`);
    Deno.writeTextFileSync(`/proc/${helper.pid}/setgroups`, "deny");
    Deno.writeTextFileSync(`/proc/${helper.pid}/gid_map`, `0 ${uid} 1\n`);
    const { sym, errno } = mountApi();
    const path = cString(`/proc/${helper.pid}/ns/user`);
    const fd = sym.openat(MOUNT.AT_FDCWD, path, MOUNT.O_RDONLY | MOUNT.O_CLOEXEC, 0);
    if (fd < 0) throw new Error(`opening its namespace failed with errno ${errno()}`);
    mapping = { uid, fd };
    return fd;
  } catch (cause) {
    throw new SandboxError(
      "E_SANDBOX_START",
      "Could not make the user namespace root's idmapped mounts need",
      {
        cause,
        details: { fix: "Install util-linux's unshare, or run Specter as an unprivileged user" },
      },
    );
  } finally {
    try {
      helper?.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    void helper?.status;
  }
}

/**
 * `realized` with its descriptors replaced by attached clones: idmapped for what the program writes
 * (`fs.write`, `persist`: refused where the filesystem cannot), idmapped where it can for what it reads
 * (`fs.read`, protections), as they are for programs and sockets outside the system trees; programs in the
 * system trees are bound as they are (anyone may pass there). Its `close` detaches them, then closes the
 * originals. Throws (having detached what it attached) when one cannot be attached.
 */
export function attachForRoot(
  realized: RealizedPolicy,
  attachments: MountAttachments,
  persist: string | null,
): RealizedPolicy {
  const written = new Set<string>([...realized.policy.fs.write, ...(persist === null ? [] : [persist])]);
  const read = new Set<string>([...realized.policy.fs.read, ...realized.protect, ...realized.persistProtect]);
  const opened = new Map<string, OpenedPath>();
  try {
    for (const [key, entry] of realized.opened) {
      if (!written.has(key) && !read.has(key) && systemTreeOf(entry.path) !== undefined) {
        opened.set(key, entry);
        continue;
      }
      const how = written.has(key) ? "idmap" : read.has(key) ? "idmap-if-possible" : "plain";
      opened.set(key, { ...entry, fd: attachments.attach(entry.fd, entry.info.kind === "dir", how) });
    }
  } catch (error: unknown) {
    attachments.close();
    throw error;
  }
  return {
    ...realized,
    opened,
    close: () => {
      attachments.close();
      realized.close();
    },
  };
}
