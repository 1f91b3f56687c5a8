/**
 * An agent's `workdir`: honoured or refused, never replaced. Inside a sandbox a program starts in its
 * working directory only when the policy shows it (otherwise a launch falls back to the private `/tmp`),
 * so the tools check first and refuse a directory the policy hides, with `E_SPAWN_CWD`: a command an agent
 * meant for one directory never runs in another one with exit 0.
 *
 * @module
 */
import { resolve } from "node:path";
import { SpawnError } from "../errors.ts";
import { isWithin } from "../fsafe/mod.ts";
import type { Policy } from "../policy/mod.ts";

/** Why a workdir is refused (`details.reason` of the `E_SPAWN_CWD` error). */
export type WorkdirRefusal = "missing" | "not_directory" | "hidden";

function refuse(reason: WorkdirRefusal, path: string, message: string): SpawnError {
  return new SpawnError("E_SPAWN_CWD", message, { details: { reason, workdir: path } });
}

/** Resolves `path` through links, or `null` when it does not exist. */
function realPath(path: string): string | null {
  try {
    return Deno.realPathSync(path);
  } catch {
    return null; // Missing (or unreachable): the caller says so.
  }
}

/**
 * The directory a session runs in: `requested` (absolute, or relative to `serverCwd`, as Codex resolves
 * it), resolved through links; `serverCwd` when absent. With a `policy`, the directory must lie inside
 * one of its `fs.read` or `fs.write` grants. Throws `E_SPAWN_CWD` (details.reason: missing,
 * not_directory, hidden).
 */
export function resolveWorkdir(
  requested: string | undefined,
  serverCwd: string,
  policy: Policy | null,
): string {
  if (requested === undefined) return serverCwd;
  const path = resolve(serverCwd, requested);
  const real = realPath(path);
  if (real === null) throw refuse("missing", path, `Workdir "${path}" does not exist`);
  if (!Deno.statSync(real).isDirectory) {
    throw refuse("not_directory", path, `Workdir "${path}" is not a directory`);
  }
  if (policy === null) return real;
  const roots = [...policy.fs.read, ...policy.fs.write];
  const shown = roots.some((root) => isWithin(real, root) || isWithin(real, realPath(root) ?? root));
  if (!shown) {
    const name = policy.source.replace(/^preset:/, "");
    const scratch = isWithin(real, "/tmp")
      ? ' (the sandbox\'s /tmp is its own: omit workdir and "cd /tmp" in the command)'
      : "";
    throw refuse(
      "hidden",
      path,
      `Workdir "${path}" is not visible under policy "${name}"${scratch}: start the server there (--cwd), ` +
        "or give it a --policy FILE whose fs.read shows it",
    );
  }
  return real;
}
