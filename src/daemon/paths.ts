/**
 * Where the daemon lives: its socket in the user's runtime directory, its state (frame logs, saved
 * sessions, the keeper's socket) in the user's state directory, as the XDG base directory spec places them.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { DaemonError } from "../errors.ts";
import { closeFd } from "../fsafe/mod.ts";
import { openPrivateDir } from "./trust.ts";

// Where the daemon's socket, state and persistent homes are by default: the session layer knows them,
// since every launch keeps them out of its sandbox.
export { defaultPersistRoot, defaultSocketPath, defaultStateDir } from "../session/mod.ts";

/**
 * Makes `dir` (0700) when missing, then checks it is a real directory owned by this user that nobody
 * else can enter (as tmux and abduco check theirs): a shared or foreign directory could let another user
 * replace the socket. The check is made on a descriptor of the directory (opened without following a
 * symlink), so what is checked is what `mkdir` made or found, not whatever the name points to a moment
 * later. Throws `E_DAEMON_UNAVAILABLE` when it cannot be made, `E_DAEMON_UNTRUSTED` when it is not private.
 */
export function privateDir(dir: string): void {
  try {
    Deno.mkdirSync(dirname(dir), { recursive: true, mode: 0o700 });
    Deno.mkdirSync(dir, { mode: 0o700 });
  } catch (error: unknown) {
    if (!(error instanceof Deno.errors.AlreadyExists)) {
      throw new DaemonError("E_DAEMON_UNAVAILABLE", `Directory "${dir}" cannot be created`, { cause: error });
    }
  }
  const fd = openPrivateDir(dir);
  if (fd === null) {
    // Removed between mkdir and open: someone else is at work in its parent.
    throw new DaemonError("E_DAEMON_UNAVAILABLE", `Directory "${dir}" vanished as it was made`, {
      details: { path: dir },
    });
  }
  closeFd(fd);
}

/** A session's directory in the state directory. */
export function sessionDir(stateDir: string, name: string): string {
  return join(stateDir, "sessions", name);
}
