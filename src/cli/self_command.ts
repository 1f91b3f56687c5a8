/**
 * This program's own command line, and starting it again detached: the keeper, an autostarted daemon and a
 * network relay are the same binary. Apart from `daemon_client.ts`, so that what starts a relay (`run`,
 * `exec`, `agent`) does not depend on the daemon's client.
 *
 * @module
 */
import { basename } from "node:path";
import { fileURLToPath } from "node:url";

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
