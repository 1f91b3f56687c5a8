/**
 * A scenario's scratch workspace: a fresh directory seeded with files, the run's cwd and `${workspace}`.
 * It lives in the system temp directory while the program runs (a sandboxed program may not be able to
 * reach the artifacts directory, e.g. under root's 0700 home) and is archived into the artifacts after.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { FileError, SessionError } from "../errors.ts";
import { closeFd, openDirectory, readFileBeneath, walkBeneath } from "../fsafe/mod.ts";

/** Where the workspace is archived inside the artifacts. */
export const WORKSPACE_DIR = "workspace";

/** Creates a fresh workspace seeded with `files` (relative path → text) and returns its path (`E_IO`). */
export function createWorkspace(files: Readonly<Record<string, string>>): string {
  let root = "";
  try {
    // 0700: the sandboxed program runs as the caller (root's too), so no one else needs to enter it.
    root = Deno.makeTempDirSync({ prefix: "specter-workspace-" });
    for (const [name, text] of Object.entries(files)) {
      const path = join(root, name);
      const parents: string[] = [];
      for (let dir = dirname(path); dir !== root; dir = dirname(dir)) parents.unshift(dir);
      for (const dir of parents) {
        Deno.mkdirSync(dir, { recursive: true, mode: 0o755 });
      }
      Deno.writeTextFileSync(path, text, { mode: 0o644 });
    }
  } catch (error: unknown) {
    throw new SessionError("E_IO", `Cannot create the workspace "${root}": ${(error as Error).message}`, {
      cause: error,
      details: { dir: root },
    });
  }
  return root;
}

/** Largest workspace file archived into the artifacts (the program wrote it; it could be anything). */
export const MAX_ARCHIVED_FILE_BYTES = 64 * 1024 * 1024;

/**
 * Copies the workspace's regular files into `artifacts/workspace/` through `write` (the bundle's, which
 * writes beneath its directory's descriptor and never through a link) and removes it. The program could
 * write the workspace, so every entry is opened beneath the workspace's descriptor with no symlink in
 * any component and read through the descriptor that was checked: a symlink, special file or file over
 * {@link MAX_ARCHIVED_FILE_BYTES} is not archived (never followed, even when swapped in mid-copy).
 * Best effort: the run's result must still be written if this fails.
 */
export function archiveWorkspace(root: string, write: (path: string, bytes: Uint8Array) => void): void {
  let rootFd = -1;
  try {
    rootFd = openDirectory(root);
    walkBeneath(rootFd, (entry) => {
      if ("error" in entry) {
        if (entry.error instanceof FileError) return; // A symlink (or gone): not archived, never followed.
        throw entry.error;
      }
      if (entry.kind !== "file") return;
      let bytes: Uint8Array;
      try {
        bytes = readFileBeneath(rootFd, entry.path, {
          maxBytes: MAX_ARCHIVED_FILE_BYTES,
          what: "workspace file",
        });
      } catch (error: unknown) {
        if (error instanceof FileError) return; // Swapped for a link or a FIFO, or too large: not archived.
        throw error;
      }
      write(`${WORKSPACE_DIR}/${entry.path}`, bytes);
    });
  } finally {
    closeFd(rootFd);
    Deno.removeSync(root, { recursive: true });
  }
}
