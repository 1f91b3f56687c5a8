/**
 * Strict command-line parsing with typed errors: every subcommand's flags go through {@link parseFlags}.
 * Apart from `flags.ts` (the session flags, which load the policy layer) so that the long-lived
 * `specter keeper` loads only this.
 *
 * @module
 */
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { flagError } from "./flag_errors.ts";

/** Parsed flag values (strings, booleans and string lists, as `parseArgs` returns them). */
export type FlagValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

/**
 * `parseArgs` in strict mode whose every complaint (unknown flag, missing value, a value for a boolean
 * flag) is an `E_USAGE` error, never an untyped `TypeError`. Every subcommand parses through this.
 */
export function parseFlags(
  args: readonly string[],
  options: ParseArgsOptionsConfig,
): { values: FlagValues; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      options,
      allowPositionals: true,
      strict: true,
    });
    return { values: values as FlagValues, positionals };
  } catch (error: unknown) {
    throw flagError(error, options);
  }
}
