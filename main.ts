/**
 * `specter` entry point: parses nothing itself, runs the CLI, exits with its code.
 *
 * `specter keeper` is the exception to the dispatcher: the daemon starts it and it lives as long as the
 * daemon's sessions, so it loads only the keeper's entry (`src/cli/keeper.ts`), not the CLI's. Both are
 * imported by literal specifiers, so `deno compile` still finds them. (Under `deno run`, the daemon starts
 * its keeper, and a client its daemon, from that command's own module instead: `src/cli/self_command.ts`.)
 *
 * @module
 */
if (import.meta.main) {
  const [command, ...rest] = Deno.args;
  if (command === "keeper" && !rest.some((arg) => arg === "--help" || arg === "-h")) {
    Deno.exit(await (await import("./src/cli/keeper.ts")).keeperMain(Deno.args));
  }
  Deno.exit(await (await import("./src/cli/cli.ts")).runCli(Deno.args));
}
