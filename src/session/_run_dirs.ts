/**
 * A run's private directories on the host (a Seatbelt run's temp directory, shell integration's files
 * without a sandbox), made before the launch and removed after `exit`.
 *
 * @module
 */

/** A private (0700) temp directory for one Seatbelt run, by its resolved path (`/var` is a symlink there). */
export function makePrivateTmp(): string {
  return Deno.realPathSync(Deno.makeTempDirSync({ prefix: "specter-tmp-" }));
}

/** A private directory (0700) for shell integration's files of a run without a sandbox. */
export function makeShellDir(): string {
  return Deno.realPathSync(Deno.makeTempDirSync({ prefix: "specter-shell-" }));
}

/**
 * Removes a run's temp directory after it ended. Whatever the program left there is removed without
 * following its symlinks (the directory was writable by it), best effort: a failure leaves a directory
 * in the system temp directory, which the OS cleans.
 */
export function removeTmpDir(path: string): void {
  try {
    Deno.removeSync(path, { recursive: true });
  } catch {
    // Best effort, see above.
  }
}
