/**
 * This program's own command line, and starting it again detached: the keeper, an autostarted daemon and a
 * network relay are the same binary. Apart from `daemon_client.ts`, so that what starts a relay (`run`,
 * `exec`, `agent`) does not depend on the daemon's client.
 *
 * @module
 */
import { basename } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The commands Specter starts as processes of their own, each with an entry module of its own,
 * `src/cli/NAME.ts` (`-` as `_`), which runs the command when it is the main module (`import.meta.main`,
 * through `runAsMain`). Why: under `deno run`, Deno builds (and keeps) the module graph of the whole entry,
 * the modules its literal dynamic imports name included, so from `main.ts` each of these processes would hold
 * the graph of every command (about 7 MiB of an idle keeper's resident memory, measured: docs/benchmarks.md).
 * A compiled binary has no graph to build and runs them as `specter NAME`.
 */
export type SelfCommand = "keeper" | "daemon" | "net-relay";

/**
 * The program that runs `command`, to be followed by the command's name and its arguments (as `specter`
 * is): under `deno run`, Deno and the command's entry module (the path is made, not imported: this module
 * must not import those, which import it); a compiled binary is the program itself.
 */
export function selfProgram(command: SelfCommand): string[] {
  const exe = Deno.execPath();
  if (!fromSource(exe)) return [exe];
  const entry = new URL(`./${command.replaceAll("-", "_")}.ts`, import.meta.url);
  return [exe, "run", "-A", fileURLToPath(entry)];
}

/** Whether this program runs as a script of `deno run` (not a compiled binary). */
function fromSource(exe: string): boolean {
  return /^deno(\.exe)?$/.test(basename(exe)) && Deno.mainModule.startsWith("file:");
}

/**
 * V8 flags for the long-lived daemon and keeper (unless `DENO_V8_FLAGS` says otherwise): a 1 MiB young
 * generation, collected often, keeps their resident memory close to what they hold (with V8's default the
 * garbage of a thousand spawns stayed resident: ~100 KiB per idle session, against ~30 KiB so).
 */
export const LEAN_V8_FLAGS = "--max-semi-space-size=1,--optimize-for-size";

/**
 * The keeper's V8 flags: {@link LEAN_V8_FLAGS} and `--lite-mode` (no optimizing compiler, feedback vectors
 * made only for functions that run often). The keeper runs little code, the same code for every session: it
 * keeps ~4 KiB per idle session instead of ~14, and neither a spawn through it nor a live session's relay
 * measured slower (docs/benchmarks.md, 2026-11-28, fourth session). Not for the daemon: its attach (parsing
 * and encoding frames) was a third slower so.
 */
export const KEEPER_V8_FLAGS = `${LEAN_V8_FLAGS},--lite-mode`;

/**
 * The V8 flags `command` runs with: `DENO_V8_FLAGS` when the user set it (anything other than what a
 * daemon started so inherits: {@link LEAN_V8_FLAGS}), else the command's own. `inherited`: that variable
 * as this process has it (read from the environment unless given).
 */
export function v8FlagsOf(
  command: SelfCommand,
  inherited: string | undefined = Deno.env.get("DENO_V8_FLAGS"),
): string {
  if (inherited !== undefined && inherited !== LEAN_V8_FLAGS) return inherited;
  return command === "keeper" ? KEEPER_V8_FLAGS : LEAN_V8_FLAGS;
}

/** Starts `specter COMMAND ARGS` detached from this process (its own session; no stdio). */
export function startDetached(command: "keeper" | "daemon", args: readonly string[]): void {
  const [program, ...rest] = selfProgram(command);
  const child = new Deno.Command(program!, {
    args: [...rest, command, ...args],
    env: { DENO_V8_FLAGS: v8FlagsOf(command) },
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
