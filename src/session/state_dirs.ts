/**
 * Specter's own state on the host, where it is by default: the daemon's socket and state (frame logs,
 * saved sessions with their marks' nonces, the keeper), the persistent homes beside it, the runs'
 * artifacts (audit logs, recordings) and the command log. Every launch keeps these out of its sandbox
 * (`specterStateDirs`, guarded by identity like a run's own artifacts): a program granted `~/.local`
 * must not read another session's nonce, home or output, nor rewrite another run's audit log.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { defaultRunsDir } from "../artifacts/mod.ts";
import { defaultCommandLogPath } from "../history/mod.ts";

/** An environment lookup (`Deno.env.get` by default). */
type Env = (name: string) => string | undefined;

/** The daemon's socket: `$XDG_RUNTIME_DIR/specter/daemon.sock`, else `/tmp/specter-$UID/daemon.sock`. */
export function defaultSocketPath(env: Env = Deno.env.get): string {
  const runtime = env("XDG_RUNTIME_DIR");
  const dir = runtime !== undefined && runtime.startsWith("/")
    ? join(runtime, "specter")
    : `/tmp/specter-${Deno.uid()}`;
  return join(dir, "daemon.sock");
}

/** The daemon's state: `$XDG_STATE_HOME/specter/daemon`, else `~/.local/state/specter/daemon`. */
export function defaultStateDir(env: Env = Deno.env.get): string {
  const state = env("XDG_STATE_HOME");
  if (state !== undefined && state.startsWith("/")) return join(state, "specter", "daemon");
  const home = env("HOME") ?? "/root";
  return join(home, ".local", "state", "specter", "daemon");
}

/**
 * Where persistent layers go for a daemon on `stateDir`: beside the state directory, for root as for anyone
 * (root's sandboxes bind their layer through an idmapped clone, so it may lie in root's 0700 home; 0.6 put
 * root's in a shared `/var/lib/specter/persist/`, where a host service running as its sandbox uid could
 * reach them).
 */
export function defaultPersistRoot(stateDir: string): string {
  return join(stateDir, "..", "persist");
}

/**
 * The directories every launch keeps out of its sandbox: the daemon's default socket directory, state
 * directory and persistent homes, the runs' artifacts root and the command log's directory (absolute,
 * without duplicates). A missing one is skipped by the guard, so this costs a few `open`s per launch.
 */
export function specterStateDirs(env: Env = Deno.env.get): string[] {
  const state = defaultStateDir(env);
  return [
    ...new Set([
      dirname(defaultSocketPath(env)),
      state,
      defaultPersistRoot(state),
      defaultRunsDir({ get: env }),
      dirname(defaultCommandLogPath(env)),
    ]),
  ].filter((dir) => dir.startsWith("/"));
}
