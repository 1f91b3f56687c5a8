/**
 * Root mode: the host uid root's sandboxes run as, and the idmapped mounts that make what they write
 * root's.
 *
 * Started by root, bwrap runs through `setpriv --reuid=UID --regid=UID`: the sandbox's user namespace maps
 * its uid 65534 to UID, a uid of its own (a fixed uid of a range no account or subordinate-id range uses),
 * so no host service shares it (0.6's `nobody` did) and none of the kernel's
 * special cases for uid 0 apply (sysctls, device nodes, leases, per-user limits, peer checks). Each path the
 * launch binds is attached first, as a clone of its opened descriptor, beneath a private directory; those
 * the program reads or writes (grants, protections, the persistent layer) through an idmapped mount that
 * shows root's files as UID's and stores UID's writes as root's. bwrap binds the attached mounts; once it
 * has, they are detached from the host (the sandbox keeps its copies).
 *
 * @module
 */
import { SandboxError } from "../errors.ts";
import { cString, MOUNT, mountApi, mountAttr, NR } from "./_mount_api.ts";
import type { OpenedPath, RealizedPolicy } from "./realize.ts";

/** The range root's sandbox uids come from: above every account and the usual subordinate ranges. */
export const ROOT_SANDBOX_UIDS = { first: 1_500_000_000, count: 500_000_000 } as const;

let chosen: number | undefined;

/**
 * The host uid root's sandboxes run as: one fixed uid of the range (the same in every Specter process, so a
 * plan and its hashes are the same in `policy render` and in the run), moved on past any uid an account
 * (`/etc/passwd`) has.
 */
export function rootSandboxUid(): number {
  if (chosen !== undefined) return chosen;
  const taken = accountUids();
  let uid = ROOT_SANDBOX_UIDS.first + FIXED_OFFSET;
  while (taken.has(uid)) {
    uid = ROOT_SANDBOX_UIDS.first + (uid - ROOT_SANDBOX_UIDS.first + 1) % ROOT_SANDBOX_UIDS.count;
  }
  return chosen = uid;
}

/** Where in the range the uid is: fixed, away from its round numbers. */
const FIXED_OFFSET = 234_059_871;

function accountUids(): Set<number> {
  const taken = new Set<number>();
  try {
    for (const line of Deno.readTextFileSync("/etc/passwd").split("\n")) {
      const uid = Number(line.split(":")[2]);
      if (Number.isInteger(uid)) taken.add(uid);
    }
  } catch {
    // No passwd file: nothing is named there.
  }
  return taken;
}

let mapping: { uid: number; fd: number } | undefined;

/**
 * A user namespace mapping its uid and gid 0 to `uid`, for idmapped mounts (held open for the process's
 * life): made by a helper `unshare --user sleep`, whose maps root writes, then killed.
 */
export function idmapNamespace(uid: number): number {
  if (mapping?.uid === uid) return mapping.fd;
  const helper = new Deno.Command("unshare", {
    args: ["--user", "sleep", "60"],
    stdin: "null",
    stdout: "null",
    stderr: "null",
    clearEnv: true,
  }).spawn();
  try {
    const own = Deno.readLinkSync("/proc/self/ns/user");
    const deadline = Date.now() + 5_000;
    // unshare has made its namespace once its /proc entry shows another one.
    while (Deno.readLinkSync(`/proc/${helper.pid}/ns/user`) === own) {
      if (Date.now() > deadline) throw new Error("the helper did not make its user namespace");
    }
    Deno.writeTextFileSync(`/proc/${helper.pid}/uid_map`, `0 ${uid} 1\n`);
    Deno.writeTextFileSync(`/proc/${helper.pid}/setgroups`, "deny");
    Deno.writeTextFileSync(`/proc/${helper.pid}/gid_map`, `0 ${uid} 1\n`);
    const { sym, errno } = mountApi();
    const fd = sym.openat(
      MOUNT.AT_FDCWD,
      cString(`/proc/${helper.pid}/ns/user`),
      MOUNT.O_RDONLY | MOUNT.O_CLOEXEC,
      0,
    );
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
      helper.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    void helper.status;
  }
}

/** Where attachments live: `$TMPDIR/specter-mounts-PID-XXXX`. */
const PREFIX = "specter-mounts-";

/** Detaches and removes the attachment directories of Specter processes that are gone (best effort). */
function sweepStale(): void {
  const tmp = Deno.env.get("TMPDIR") ?? "/tmp";
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(tmp)];
  } catch {
    return; // No temp directory to sweep.
  }
  for (const entry of entries) {
    const pid = entry.name.startsWith(PREFIX) ? Number(entry.name.slice(PREFIX.length).split("-")[0]) : NaN;
    if (!Number.isInteger(pid) || pid <= 0) continue;
    try {
      Deno.statSync(`/proc/${pid}`);
      continue; // Its Specter still runs.
    } catch {
      // Gone: what it attached is detached below.
    }
    const dir = `${tmp}/${entry.name}`;
    try {
      for (const point of Deno.readDirSync(dir)) {
        mountApi().sym.umount2(cString(`${dir}/${point.name}`), MOUNT.MNT_DETACH);
      }
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // Another Specter swept it first, or a point is busy: the next sweep tries again.
    }
  }
}

/** How a descriptor is attached: idmapped (read or written by the program) or as it is. */
export type Attach = "idmap" | "plain";

/**
 * Mount clones of opened descriptors, attached beneath a private directory of root's (0711: bwrap, running
 * as the sandbox's uid, passes through it to what it binds, and lists nothing). {@link close} detaches them.
 */
export class MountAttachments {
  readonly #dir: string;
  readonly #points: string[] = [];
  readonly #fds: number[] = [];
  readonly #userns: number;
  #closed = false;

  private constructor(dir: string, userns: number) {
    this.#dir = dir;
    this.#userns = userns;
  }

  /**
   * A fresh private directory for the attachments of one launch, mapping through `userns`. Directories a
   * dead Specter left (named by its pid) are detached and removed first.
   */
  static create(userns: number): MountAttachments {
    sweepStale();
    const dir = Deno.makeTempDirSync({ prefix: `${PREFIX}${Deno.pid}-` });
    Deno.chmodSync(dir, 0o711);
    return new MountAttachments(dir, userns);
  }

  /**
   * Attaches a clone of the mount of `fd` (an opened file or directory) and returns an `O_PATH`
   * descriptor of it (close-on-exec; closed by {@link close}). `idmap` fails with `E_SANDBOX_START` on a
   * filesystem without idmapped mounts.
   */
  attach(fd: number, isDirectory: boolean, how: Attach): number {
    const { sym, errno } = mountApi();
    const point = `${this.#dir}/${this.#points.length}`;
    if (isDirectory) Deno.mkdirSync(point, { mode: 0o700 });
    else Deno.writeFileSync(point, new Uint8Array(), { mode: 0o600 });
    this.#points.push(point);
    const tree = Number(sym.syscall_open_tree(
      NR.open_tree,
      BigInt(fd),
      cString(""),
      BigInt(MOUNT.OPEN_TREE_CLONE | MOUNT.OPEN_TREE_CLOEXEC | MOUNT.AT_EMPTY_PATH),
    ));
    if (tree < 0) throw this.#failure("open_tree", errno());
    try {
      if (how === "idmap") {
        const attr = mountAttr(MOUNT.MOUNT_ATTR_IDMAP, this.#userns);
        const set = Number(sym.syscall_mount_setattr(
          NR.mount_setattr,
          BigInt(tree),
          cString(""),
          BigInt(MOUNT.AT_EMPTY_PATH),
          attr,
          BigInt(attr.length),
        ));
        if (set < 0) throw this.#failure("mount_setattr(MOUNT_ATTR_IDMAP)", errno());
      }
      const moved = Number(sym.syscall_move_mount(
        NR.move_mount,
        BigInt(tree),
        cString(""),
        BigInt(MOUNT.AT_FDCWD),
        cString(point),
        BigInt(MOUNT.MOVE_MOUNT_F_EMPTY_PATH),
      ));
      if (moved < 0) throw this.#failure("move_mount", errno());
    } finally {
      sym.close(tree);
    }
    const opened = sym.openat(MOUNT.AT_FDCWD, cString(point), MOUNT.O_PATH | MOUNT.O_CLOEXEC, 0);
    if (opened < 0) throw this.#failure("open", errno());
    this.#fds.push(opened);
    return opened;
  }

  /** Detaches every attachment (the sandboxes that bound them keep theirs) and removes the directory. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const { sym } = mountApi();
    for (const fd of this.#fds) sym.close(fd);
    for (const point of this.#points) sym.umount2(cString(point), MOUNT.MNT_DETACH);
    try {
      Deno.removeSync(this.#dir, { recursive: true });
    } catch {
      // A point still busy: detached above, so the directory is empty of mounts; left for the next sweep.
    }
  }

  #failure(call: string, errno: number): SandboxError {
    return new SandboxError(
      "E_SANDBOX_START",
      `Root mode could not attach a grant: ${call} failed (errno ${errno})`,
      {
        details: {
          errno,
          fix: errno === 22 && call.startsWith("mount_setattr")
            ? "The grant's filesystem has no idmapped mounts (ext4, xfs, btrfs, overlayfs ≥ 5.19, tmpfs ≥ 6.3 " +
              "do): grant a directory on one, or run Specter as an unprivileged user"
            : "Run Specter as an unprivileged user",
        },
      },
    );
  }
}

/**
 * `realized` with every opened descriptor replaced by an attached clone (idmapped for what the program
 * reads or writes: `fs.read`, `fs.write`, protections and `persist`; as it is for programs and sockets).
 * Its `close` detaches them, then closes the originals. Throws (having detached what it attached) when one
 * cannot be attached.
 */
export function attachForRoot(
  realized: RealizedPolicy,
  attachments: MountAttachments,
  persist: string | null,
): RealizedPolicy {
  const mapped = new Set<string>([
    ...realized.policy.fs.read,
    ...realized.policy.fs.write,
    ...realized.protect,
    ...realized.persistProtect,
    ...(persist === null ? [] : [persist]),
  ]);
  const opened = new Map<string, OpenedPath>();
  try {
    for (const [key, entry] of realized.opened) {
      const fd = attachments.attach(entry.fd, entry.info.kind === "dir", mapped.has(key) ? "idmap" : "plain");
      opened.set(key, { ...entry, fd });
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
