/**
 * A scenario's scratch workspace: a fresh directory seeded with files, the run's cwd and `${workspace}`.
 * It lives in the system temp directory while the program runs (a sandboxed program may not be able to
 * reach the artifacts directory, e.g. under root's 0700 home) and is archived into the artifacts after.
 *
 * @module
 */
import { dirname, join, relative } from "node:path";
import { SessionError } from "../errors.ts";
import { SANDBOX_ID } from "../sandbox/bwrap.ts";

/** Where the workspace is archived inside the artifacts. */
export const WORKSPACE_DIR = "workspace";

/** As root the sandboxed program runs as an unprivileged uid: hand it what it must write. */
function handOver(path: string): void {
  if (Deno.uid() === 0) Deno.chownSync(path, SANDBOX_ID, SANDBOX_ID);
}

/** Creates a fresh workspace seeded with `files` (relative path → text) and returns its path (`E_IO`). */
export function createWorkspace(files: Readonly<Record<string, string>>): string {
  let root = "";
  try {
    root = Deno.makeTempDirSync({ prefix: "specter-workspace-" });
    Deno.chmodSync(root, 0o755);
    handOver(root);
    for (const [name, text] of Object.entries(files)) {
      const path = join(root, name);
      const parents: string[] = [];
      for (let dir = dirname(path); dir !== root; dir = dirname(dir)) parents.unshift(dir);
      for (const dir of parents) {
        Deno.mkdirSync(dir, { recursive: true, mode: 0o755 });
        handOver(dir);
      }
      Deno.writeTextFileSync(path, text, { mode: 0o644 });
      handOver(path);
    }
  } catch (error: unknown) {
    throw new SessionError("E_IO", `Cannot create the workspace "${root}": ${(error as Error).message}`, {
      cause: error,
      details: { dir: root },
    });
  }
  return root;
}

/**
 * Copies the workspace's regular files into `artifacts/workspace/` (symlinks and special files are not
 * followed) and removes it. Best effort: the run's result must still be written if this fails.
 */
export function archiveWorkspace(root: string, artifacts: string): void {
  const copy = (dir: string) => {
    for (const entry of Deno.readDirSync(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) copy(path);
      else if (entry.isFile) {
        const target = join(artifacts, WORKSPACE_DIR, relative(root, path));
        Deno.mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
        Deno.copyFileSync(path, target);
      }
    }
  };
  try {
    copy(root);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
}
