/**
 * Root mode's mount attachments: clones of opened descriptors (`open_tree`, recursive), those the program
 * reads or writes idmapped to the sandbox's uid (`mount_setattr`), attached beneath a directory only root
 * and the sandbox's uid can pass (bwrap, running as that uid, binds a descriptor's path), and detached once
 * bwrap has bound them (the sandbox keeps its copies).
 *
 * The directories live in `/run/specter/` (root's, 0710, group the sandbox's gid): `/run` is root's, so no
 * other user can plant or watch anything there, and no policy may grant it (`FORBIDDEN_TREES`). Each launch
 * holds a lock on its own directory; a directory whose lock nobody holds is a dead launch's and is swept
 * (detached without following a link, then removed).
 *
 * @module
 */
import { SandboxError } from "../errors.ts";
import { closeFd, fdInfo, fdProcPath, openNoFollow } from "../fsafe/mod.ts";
import { tryLockFile } from "../pty/mod.ts";
import { cString, MOUNT, mountApi, mountAttr, NR } from "./_mount_api.ts";
import { parseMountInfo } from "./mount_check.ts";

/** Where attachment directories live. */
export const ATTACH_ROOT = "/run/specter";
/** Each launch's directory: `ATTACH_ROOT/mounts-XXXX`, locked by `lock` while the launch lives. */
const PREFIX = "mounts-";
/** The lock file's name in a launch's directory. */
const LOCK = "lock";
/**
 * A directory without its lock this long is a launch that died before locking it (nothing was attached
 * there yet); a younger one is being made.
 */
const UNLOCKED_GRACE_MS = 60_000;

/** How a descriptor is attached: idmapped; idmapped where its filesystem allows, else as it is; as it is. */
export type Attach = "idmap" | "idmap-if-possible" | "plain";

/**
 * Mount clones of opened descriptors for one launch, attached beneath a directory only root and the
 * sandbox's gid may pass. {@link close} detaches them and removes the directory.
 */
export class MountAttachments {
  readonly #dir: string;
  readonly #lock: number;
  readonly #points: string[] = [];
  readonly #fds: number[] = [];
  readonly #userns: number;
  #closed = false;

  private constructor(dir: string, lock: number, userns: number) {
    this.#dir = dir;
    this.#lock = lock;
    this.#userns = userns;
  }

  /**
   * A fresh directory for the attachments of one launch by the sandbox uid `uid` (its gid is the same),
   * mapping through `userns`. Dead launches' directories are swept first. Throws `E_SANDBOX_START` when
   * `/run/specter` cannot be made root's and private.
   */
  static create(uid: number, userns: number): MountAttachments {
    try {
      privateRoot(uid);
      sweepStale();
      const random = crypto.randomUUID().slice(0, 8);
      const dir = `${ATTACH_ROOT}/${PREFIX}${random}`;
      Deno.mkdirSync(dir, { mode: 0o700 }); // Fails on an existing name: never someone else's.
      // Locked under another name, then renamed: a sweep that finds `lock` finds it held. (Made in place,
      // another launch's sweep could take it between its creation and the flock, and remove the directory.)
      const lock = tryLockFile(`${dir}/${LOCK}.new`);
      if (lock === null) throw new Error(`"${dir}/${LOCK}.new" is held already`);
      Deno.renameSync(`${dir}/${LOCK}.new`, `${dir}/${LOCK}`);
      Deno.chownSync(dir, 0, uid);
      Deno.chmodSync(dir, 0o710);
      return new MountAttachments(dir, lock, userns);
    } catch (cause) {
      if (cause instanceof SandboxError) throw cause;
      throw new SandboxError("E_SANDBOX_START", `Root mode could not prepare "${ATTACH_ROOT}"`, {
        cause,
        details: { fix: "Run Specter as an unprivileged user, or make /run writable by root" },
      });
    }
  }

  /**
   * Attaches a recursive clone of the mount of `fd` (an opened file or directory) and returns an `O_PATH`
   * descriptor of it (close-on-exec; closed by {@link close}). `idmap` fails with `E_SANDBOX_START` on a
   * filesystem without idmapped mounts; `idmap-if-possible` attaches it as it is there.
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
      BigInt(MOUNT.OPEN_TREE_CLONE | MOUNT.OPEN_TREE_CLOEXEC | MOUNT.AT_EMPTY_PATH | MOUNT.AT_RECURSIVE),
    ));
    if (tree < 0) throw failure("open_tree", errno());
    try {
      if (how !== "plain") {
        const attr = mountAttr(MOUNT.MOUNT_ATTR_IDMAP, this.#userns);
        const set = Number(sym.syscall_mount_setattr(
          NR.mount_setattr,
          BigInt(tree),
          cString(""),
          BigInt(MOUNT.AT_EMPTY_PATH | MOUNT.AT_RECURSIVE),
          attr,
          BigInt(attr.length),
        ));
        if (set < 0 && (how === "idmap" || errno() !== EINVAL)) {
          throw failure("mount_setattr(MOUNT_ATTR_IDMAP)", errno());
        }
      }
      const moved = Number(sym.syscall_move_mount(
        NR.move_mount,
        BigInt(tree),
        cString(""),
        BigInt(MOUNT.AT_FDCWD),
        cString(point),
        BigInt(MOUNT.MOVE_MOUNT_F_EMPTY_PATH),
      ));
      if (moved < 0) throw failure("move_mount", errno());
    } finally {
      closeFd(tree);
    }
    const opened = openNoFollow(point);
    this.#fds.push(opened);
    return opened;
  }

  /** Detaches every attachment (the sandboxes that bound them keep theirs) and removes the directory. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const fd of this.#fds) closeFd(fd);
    detachAll(this.#dir, this.#points);
    closeFd(this.#lock);
  }
}

const EINVAL = 22;

/** Makes `/run/specter` (0710, root's, group `gid`) or checks it by descriptor: a directory of root's. */
function privateRoot(gid: number): void {
  try {
    Deno.mkdirSync(ATTACH_ROOT, { mode: 0o700 });
  } catch (error: unknown) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  }
  const fd = openNoFollow(ATTACH_ROOT);
  try {
    const info = fdInfo(fd);
    if (info.kind !== "dir" || info.uid !== 0) {
      throw new SandboxError("E_SANDBOX_START", `"${ATTACH_ROOT}" is not a directory of root's`, {
        details: { path: ATTACH_ROOT, kind: info.kind, uid: info.uid },
      });
    }
    // Through the descriptor just checked: the group the sandbox passes with, nothing for anyone else.
    Deno.chownSync(fdProcPath(fd), 0, gid);
    Deno.chmodSync(fdProcPath(fd), 0o710);
  } finally {
    closeFd(fd);
  }
  unbindableRoot();
}

/** `MS_UNBINDABLE`, as a `struct mount_attr` propagation (linux/mount.h). */
const MS_UNBINDABLE = 1 << 17;
/** Serializes the one-time making of {@link ATTACH_ROOT}'s mount (two first launches at once). */
const ROOT_LOCK = "/run/specter.lock";

/**
 * Makes {@link ATTACH_ROOT} a mount point of its own with unbindable propagation, once per boot (idempotent,
 * under {@link ROOT_LOCK}). Why: attachments are mounted and detached beneath it while other launches' bwrap
 * bind `/` recursively. Beneath `/run` (shared under systemd) every attach and detach propagated into those
 * launches' copies (bwrap makes its `/` a slave, and its binds stay slaves of the host's mounts), and a detach
 * in the middle of a copy's remount failed that launch (`E_SANDBOX_UNAVAILABLE`: bwrap could not remount a
 * vanished `mounts-…/N`). Beneath an unbindable mount attaching and detaching propagate nowhere. That is not
 * all it takes: removing a point detaches the copies every other namespace holds of it, and a bwrap that
 * binds `/` recursively does copy `/run/specter` and what is beneath it (the copy is not unbindable there:
 * tests/sandbox/probe_race_test.ts saw the race). So nothing Specter runs binds a tree holding `/run/specter`:
 * policies may not grant `/` or anything in `/run`, and the bwrap probe binds `/usr` only. bwrap binds each
 * launch's own attachment by its path (the attachment itself is bindable).
 */
function unbindableRoot(): void {
  if (mountState(ATTACH_ROOT) === "unbindable") return;
  const lock = waitForLock(ROOT_LOCK);
  try {
    const state = mountState(ATTACH_ROOT);
    if (state === "unbindable") return;
    const { sym, errno } = mountApi();
    if (state === "none") {
      // A recursive clone: attachments of launches running right now stay reachable by their paths.
      const tree = Number(sym.syscall_open_tree(
        NR.open_tree,
        BigInt(MOUNT.AT_FDCWD),
        cString(ATTACH_ROOT),
        BigInt(MOUNT.OPEN_TREE_CLONE | MOUNT.OPEN_TREE_CLOEXEC | MOUNT.AT_RECURSIVE),
      ));
      if (tree < 0) throw rootFailure("open_tree", errno());
      try {
        const moved = Number(sym.syscall_move_mount(
          NR.move_mount,
          BigInt(tree),
          cString(""),
          BigInt(MOUNT.AT_FDCWD),
          cString(ATTACH_ROOT),
          BigInt(MOUNT.MOVE_MOUNT_F_EMPTY_PATH),
        ));
        if (moved < 0) throw rootFailure("move_mount", errno());
      } finally {
        closeFd(tree);
      }
    }
    const attr = new Uint8Array(32);
    new DataView(attr.buffer).setBigUint64(16, BigInt(MS_UNBINDABLE), true);
    const set = Number(sym.syscall_mount_setattr(
      NR.mount_setattr,
      BigInt(MOUNT.AT_FDCWD),
      cString(ATTACH_ROOT),
      0n,
      attr,
      BigInt(attr.length),
    ));
    if (set < 0) throw rootFailure("mount_setattr(MS_UNBINDABLE)", errno());
  } finally {
    closeFd(lock);
  }
}

/** Whether `path` is a mount point here (the top one, if several are stacked), and whether it is unbindable. */
function mountState(path: string): "none" | "mounted" | "unbindable" {
  // The topmost mount at a point is the last one listed there.
  const top = parseMountInfo(Deno.readTextFileSync("/proc/self/mountinfo"))
    .findLast((entry) => entry?.mountPoint === path);
  if (top === undefined || top === null) return "none";
  return top.propagation.includes("unbindable") ? "unbindable" : "mounted";
}

/** Takes `path`'s lock, waiting up to 5 s for another launch that holds it. */
function waitForLock(path: string): number {
  const deadline = Date.now() + 5_000;
  const nap = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    const fd = tryLockFile(path);
    if (fd !== null) return fd;
    // Made typed (E_SANDBOX_START, with this as its cause) by MountAttachments.create.
    if (Date.now() > deadline) throw new Error(`"${path}" stayed locked for 5 s`);
    Atomics.wait(nap, 0, 0, 5);
  }
}

/** Detaches and removes the directories of launches whose lock nobody holds (they died). */
function sweepStale(): void {
  for (const entry of Deno.readDirSync(ATTACH_ROOT)) {
    if (!entry.name.startsWith(PREFIX) || !entry.isDirectory) continue;
    const dir = `${ATTACH_ROOT}/${entry.name}`;
    if (!hasLock(dir)) {
      if (olderThan(dir, UNLOCKED_GRACE_MS)) {
        removeQuietly(`${dir}/${LOCK}.new`);
        removeQuietly(dir);
      }
      continue; // Being made (or removed): not a dead launch's yet.
    }
    let lock: number | null;
    try {
      lock = tryLockFile(`${dir}/${LOCK}`);
    } catch {
      continue; // Being made or removed meanwhile: the next sweep looks again.
    }
    if (lock === null) continue; // A live launch holds it.
    try {
      let points: string[];
      try {
        points = [...Deno.readDirSync(dir)].filter((p) => p.name !== LOCK).map((p) => `${dir}/${p.name}`);
      } catch (error: unknown) {
        // Its launch ended between our open of its lock and our flock (it removes the directory, then lets
        // go of the lock): nothing is left to sweep.
        if (error instanceof Deno.errors.NotFound) continue;
        throw error;
      }
      detachAll(dir, points);
    } finally {
      closeFd(lock);
    }
  }
}

/**
 * Detaches each point (lazily, never following a link) and removes the points, the lock and the directory,
 * one entry at a time and never recursively: a point that is somehow still a grant's mount keeps its
 * contents (its removal fails), and is left for a later sweep.
 */
function detachAll(dir: string, points: readonly string[]): void {
  const { sym } = mountApi();
  for (const point of points) {
    sym.umount2(cString(point), MOUNT.MNT_DETACH | MOUNT.UMOUNT_NOFOLLOW);
    removeQuietly(point);
  }
  removeQuietly(`${dir}/${LOCK}`);
  removeQuietly(dir);
}

function hasLock(dir: string): boolean {
  try {
    return Deno.lstatSync(`${dir}/${LOCK}`).isFile;
  } catch {
    return false;
  }
}

function olderThan(path: string, ms: number): boolean {
  try {
    const changed = Deno.lstatSync(path).mtime;
    return changed !== null && Date.now() - changed.getTime() > ms;
  } catch {
    return false;
  }
}

function removeQuietly(path: string): void {
  try {
    Deno.removeSync(path);
  } catch {
    // Still a mount, or not empty, or gone: nothing is removed through it; a later sweep tries again.
  }
}

/** {@link ATTACH_ROOT} could not be made its own unbindable mount (not a grant's failure: no idmap hint). */
function rootFailure(call: string, errno: number): SandboxError {
  return new SandboxError(
    "E_SANDBOX_START",
    `Root mode could not make "${ATTACH_ROOT}" a mount of its own that other sandboxes never copy: ${call} ` +
      `failed (errno ${errno})`,
    { details: { errno, path: ATTACH_ROOT, fix: "Run Specter as an unprivileged user" } },
  );
}

function failure(call: string, errno: number): SandboxError {
  return new SandboxError(
    "E_SANDBOX_START",
    `Root mode could not attach a grant: ${call} failed (errno ${errno})`,
    {
      details: {
        errno,
        fix: errno === EINVAL && call.startsWith("mount_setattr")
          ? "The grant's filesystem has no idmapped mounts (ext4, xfs, btrfs, overlayfs ≥ 5.19, tmpfs ≥ 6.3 " +
            "have them): grant a directory on one, or run Specter as an unprivileged user"
          : "Run Specter as an unprivileged user",
      },
    },
  );
}
