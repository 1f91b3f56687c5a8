/**
 * `specter keeper`: started by the daemon, not by hand. Loads only the keeper (see `src/keeper/`): it
 * lives as long as the daemon's sessions, so `main.ts` starts it through {@link keeperMain}, without the
 * CLI's dispatcher, and its flag is parsed without the session flags' policy layer (`parse_flags.ts`).
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import { runKeeper } from "../keeper/mod.ts";
import { type CommandDoc, type FlagTable, HELP_FLAG } from "./flag_table.ts";
import { parseFlags } from "./parse_flags.ts";
import { commandOptions } from "./flag_table.ts";
import { runAsMain } from "./standalone.ts";

const KEEPER_FLAGS = {
  "state-dir": { type: "string", value: "DIR", description: "The daemon's state directory (required)" },
  ...HELP_FLAG,
} as const satisfies FlagTable;

/** `specter keeper`'s help. */
export const KEEPER_DOC: CommandDoc = {
  name: "keeper",
  usage: ["specter keeper --state-dir DIR"],
  about: `Holds the daemon's terminals (started by the daemon; not meant to be run by hand). It spawns
every daemon session, reaps its processes as child subreaper, and hands the terminals to each daemon that
starts on the same state directory. Exits once it holds no session and no daemon is connected; exits 0 at
once when another keeper holds the state directory. With no daemon connected, it also exits when its state
directory is gone (killing the programs it still holds), or after 30 s holding no session
(SPECTER_KEEPER_IDLE_MS overrides the wait).`,
  groups: [{ title: "Keeper flags", flags: KEEPER_FLAGS }],
};

/** Runs `specter keeper`. */
export async function keeperCommand(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, commandOptions(KEEPER_DOC));
  if (positionals.length > 0) throw new UsageError(`Unexpected argument "${positionals[0]!.slice(0, 80)}"`);
  const stateDir = values["state-dir"];
  if (typeof stateDir !== "string" || !stateDir.startsWith("/")) {
    throw new UsageError('Flag "--state-dir" must be an absolute path');
  }
  // Its own session (started detached): a terminal's hang-up or a ctrl-c there must not reach it.
  Deno.addSignalListener("SIGHUP", () => {});
  Deno.addSignalListener("SIGINT", () => {});
  await runKeeper(stateDir);
  return 0;
}

/**
 * `specter keeper ARGS` as `main.ts` runs it (`args` is its whole command line, `keeper` first), and as this
 * module does when it is the main module (how the daemon starts its keeper under `deno run`:
 * `self_command.ts`): {@link keeperCommand}, its failure reported as `runCli` reports one. `--help` goes
 * through `runCli`, which loads every command's documentation.
 */
export function keeperMain(args: readonly string[]): Promise<number> {
  return runAsMain("keeper", args, keeperCommand);
}

if (import.meta.main) Deno.exit(await keeperMain(Deno.args));
