/**
 * Where the daemon is and how a client reaches it: the flags every daemon command takes (`--socket`,
 * `--state-dir`, `--no-autostart`), starting it on first use, and this program's own command line (the
 * keeper and an autostarted daemon are the same binary).
 *
 * @module
 */
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { UsageError } from "../errors.ts";
import { DaemonClient, defaultSocketPath, defaultStateDir } from "../daemon/mod.ts";
import type { FlagValues } from "./flags.ts";
import type { FlagTable } from "./flag_table.ts";

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

/** The command that runs this program again (the keeper, an autostarted daemon). */
export function selfCommand(): string[] {
  const exe = Deno.execPath();
  // Under `deno run` the program is a script; a compiled binary is the program itself.
  if (/^deno(\.exe)?$/.test(basename(exe)) && Deno.mainModule.startsWith("file:")) {
    return [exe, "run", "-A", fileURLToPath(Deno.mainModule)];
  }
  return [exe];
}

/**
 * V8 flags for the long-lived daemon and keeper (unless `DENO_V8_FLAGS` says otherwise): a 1 MiB young
 * generation, collected often, keeps their resident memory close to what they hold (with V8's default the
 * garbage of a thousand spawns stayed resident: ~100 KiB per idle session, against ~30 KiB so).
 */
export const LEAN_V8_FLAGS = "--max-semi-space-size=1,--optimize-for-size";

/** Starts `specter ARGS` detached from this process (its own session; no stdio). */
export function startDetached(args: readonly string[]): void {
  const [program, ...rest] = selfCommand();
  const child = new Deno.Command(program!, {
    args: [...rest, ...args],
    env: { DENO_V8_FLAGS: Deno.env.get("DENO_V8_FLAGS") ?? LEAN_V8_FLAGS },
    stdin: "null",
    stdout: "null",
    stderr: "null",
    detached: true,
  }).spawn();
  child.unref();
  void child.status.catch(() => {
    // Reaped by whoever adopts it once this process is gone.
  });
}

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
      : { start: () => startDetached(["daemon", "--socket", socketPath, "--state-dir", stateDir]) }),
  });
}
