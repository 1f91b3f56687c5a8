/**
 * Where the daemon is and how a client reaches it: the flags every daemon command takes (`--socket`,
 * `--state-dir`, `--no-autostart`) and starting it on first use. This program's own command line (the
 * keeper and an autostarted daemon are the same binary) is `self_command.ts`.
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import { DaemonClient, defaultSocketPath, defaultStateDir } from "../daemon/mod.ts";
import type { FlagValues } from "./flags.ts";
import type { FlagTable } from "./flag_table.ts";
import { startDetached } from "./self_command.ts";

/** Where the daemon is: every daemon command takes these. */
export const WHERE_FLAGS = {
  socket: {
    type: "string",
    value: "PATH",
    description: "The daemon's socket (default: $XDG_RUNTIME_DIR/specter/daemon.sock, else " +
      "/tmp/specter-UID/daemon.sock)",
  },
  "state-dir": {
    type: "string",
    value: "DIR",
    description: "Frame logs and saved sessions (default: $XDG_STATE_HOME/specter/daemon)",
  },
} as const satisfies FlagTable;

/** Client commands also take `--no-autostart`. */
export const CLIENT_FLAGS = {
  ...WHERE_FLAGS,
  "no-autostart": {
    type: "boolean",
    description: "Fail with E_DAEMON_UNAVAILABLE instead of starting a daemon when none runs",
  },
} as const satisfies FlagTable;

/** The socket and state directory the flags name. */
export function whereOf(values: FlagValues): { socketPath: string; stateDir: string } {
  const socket = values.socket;
  const state = values["state-dir"];
  return {
    socketPath: typeof socket === "string" ? absolute(socket, "socket") : defaultSocketPath(),
    stateDir: typeof state === "string" ? absolute(state, "state-dir") : defaultStateDir(),
  };
}

/** `path`, which must be absolute (`E_USAGE` otherwise). */
export function absolute(path: string, flag: string): string {
  if (!path.startsWith("/")) throw new UsageError(`Flag "--${flag}" must be an absolute path, got "${path}"`);
  return path;
}

/** Connects to the daemon the flags name, starting it unless `--no-autostart`. */
export function connectDaemon(values: FlagValues): Promise<DaemonClient> {
  const { socketPath, stateDir } = whereOf(values);
  return DaemonClient.connect({
    socketPath,
    ...(values["no-autostart"] === true
      ? {}
      : { start: () => startDetached("daemon", ["--socket", socketPath, "--state-dir", stateDir]) }),
  });
}
