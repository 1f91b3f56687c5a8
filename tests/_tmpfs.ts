/**
 * A small tmpfs that the test fills up, for full-disk tests (mounting needs root, as CI runs).
 *
 * @module
 */

/** The page size tmpfs allocates in. */
export const PAGE = 4096;

function run(cmd: string, args: string[]): void {
  const out = new Deno.Command(cmd, { args, stdout: "null", stderr: "piped" }).outputSync();
  if (!out.success) {
    throw new Error(`${cmd} ${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/**
 * Mounts a tmpfs of `sizeKiB`, fills it with a file `.fill` until the kernel says ENOSPC, frees
 * `freePages` pages of it again, calls `fn(dir)`, and unmounts and removes the mount point whatever
 * happens.
 */
export async function withFullTmpfs<T>(
  sizeKiB: number,
  freePages: number,
  fn: (dir: string) => Promise<T>,
): Promise<T> {
  const dir = Deno.makeTempDirSync({ prefix: "specter-full-" });
  run("mount", ["-t", "tmpfs", "-o", `size=${sizeKiB}k,mode=0755`, "tmpfs", dir]);
  try {
    fill(`${dir}/.fill`, freePages);
    return await fn(dir);
  } finally {
    run("umount", ["-l", dir]);
    Deno.removeSync(dir);
  }
}

/** Writes `path` until the disk is full, then shrinks it by `freePages` pages. */
export function fill(path: string, freePages: number): void {
  const file = Deno.openSync(path, { write: true, create: true, append: true });
  const chunk = new Uint8Array(PAGE);
  try {
    for (;;) file.writeSync(chunk);
  } catch (error: unknown) {
    if (!/os error 28/.test((error as Error).message)) throw error;
  }
  const size = file.statSync().size;
  file.truncateSync(Math.max(0, Math.floor(size / PAGE) * PAGE - freePages * PAGE));
  file.close();
}

/** Whether this process may mount (root): full-disk tests need it. */
export const CAN_MOUNT: boolean = Deno.uid() === 0;
