/**
 * How a command run from its own entry module ends (the keeper's and the daemon's, see `self_command.ts`):
 * as `runCli` ends one, a failure said on stderr as `specter: CODE: message` and its code's exit status.
 * Loads no command's documentation and no zod (the keeper's entry must not: `keeper_imports_test.ts`).
 *
 * @module
 */
import { toSpecterError } from "../errors.ts";
import { exitCodeForError } from "./exit_codes.ts";

/** Runs `command`; resolves with its exit status, or the status of the error it failed with. */
export async function runStandalone(command: () => Promise<number>): Promise<number> {
  try {
    return await command();
  } catch (error: unknown) {
    const failure = toSpecterError(error);
    Deno.stderr.writeSync(new TextEncoder().encode(`specter: ${failure.code}: ${failure.message}\n`));
    return exitCodeForError(failure.code);
  }
}
