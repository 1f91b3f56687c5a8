/**
 * How a command Specter starts as a process of its own runs from its own entry module (the keeper, the
 * daemon, the network relay: `self_command.ts`): as `main.ts` runs it, its name first on the command line,
 * a failure said on stderr as `specter: CODE: message` with its code's exit status. Loads no command's
 * documentation and no zod (the keeper's entry must not: `tests/keeper_imports_test.ts`).
 *
 * @module
 */
import { toSpecterError, UsageError } from "../errors.ts";
import { exitCodeForError } from "./exit_codes.ts";

/**
 * `specter NAME ARGS` from the entry module of `NAME`: `args` is what follows the module on the command line,
 * `NAME` first (anything else is `E_USAGE`), then the command's own arguments for `command`. Resolves with
 * the command's exit status, or the status of the error it failed with.
 */
export async function runAsMain(
  name: string,
  args: readonly string[],
  command: (rest: readonly string[]) => Promise<number>,
): Promise<number> {
  try {
    if (args[0] !== name) {
      throw new UsageError(`This module runs "specter ${name}": its first argument must be "${name}"`);
    }
    return await command(args.slice(1));
  } catch (error: unknown) {
    const failure = toSpecterError(error);
    Deno.stderr.writeSync(new TextEncoder().encode(`specter: ${failure.code}: ${failure.message}\n`));
    return exitCodeForError(failure.code);
  }
}

/** Writes `text` and a newline to `file` (the standalone commands' stdout and stderr). */
export function writeLine(file: { writeSync(bytes: Uint8Array): number }, text: string): void {
  const bytes = new TextEncoder().encode(`${text}\n`);
  for (let done = 0; done < bytes.length;) done += file.writeSync(bytes.subarray(done));
}
