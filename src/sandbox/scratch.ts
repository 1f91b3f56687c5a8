/**
 * The sandbox's writable scratch space: tmpfs `/tmp` and `/dev/shm`, each with a size, so that filling
 * them cannot eat the host's memory. bwrap's `--dev` puts `/dev/shm` inside its `/dev` tmpfs, which has
 * no size; `/dev/shm` therefore gets its own sized tmpfs and `/dev` itself is remounted read-only (its
 * device nodes and `/dev/pts` are separate mounts and keep working).
 *
 * tmpfs pages are memory (and are charged to the session's memory cgroup where there is one), so the
 * size follows the policy's memory budget; without a budget, {@link DEFAULT_TMPFS_BYTES}.
 *
 * @module
 */
import type { Policy } from "../policy/mod.ts";

/** The size of each scratch tmpfs when the policy has no memory budget: 1 GiB. */
export const DEFAULT_TMPFS_BYTES = 1024 * 1024 * 1024;

/** The scratch tmpfs mounts, in mount order. */
export const SCRATCH_TMPFS = ["/dev/shm", "/tmp"] as const;

/**
 * The size in bytes of each scratch tmpfs for `policy`: its memory budget when it has one (a program may
 * spend its whole budget on files there; the cgroup counts both), otherwise {@link DEFAULT_TMPFS_BYTES}.
 * Each mount is sized separately, so without a memory cgroup the two together can hold twice this.
 */
export function tmpfsSizeBytes(policy: Pick<Policy, "budgets">): number {
  return policy.budgets.memory_bytes ?? DEFAULT_TMPFS_BYTES;
}

/**
 * bwrap arguments after `--dev /dev`: a sized tmpfs on each of {@link SCRATCH_TMPFS}, and `/dev`
 * read-only.
 */
export function scratchArgs(policy: Pick<Policy, "budgets">): string[] {
  const size = String(tmpfsSizeBytes(policy));
  return [
    ...SCRATCH_TMPFS.flatMap((path) => ["--size", size, "--tmpfs", path]),
    "--remount-ro",
    "/dev",
  ];
}
