/**
 * What `parseArgs` complains about, said as a person can act on it: an unknown flag names the nearest
 * known one (`Unknown flag "--timout"; did you mean "--timeout"?`), a missing value says which flag
 * needs one. `parseArgs`' own messages are long, speak of "options" and end on an unclosed quote.
 *
 * @module
 */
import type { ParseArgsOptionsConfig } from "node:util";
import { UsageError } from "../errors.ts";
import { clip, didYouMean } from "../suggest.ts";

/** The flag a `parseArgs` message quotes (`'--timout'`, `'--timeout <value>'`, `'-x'`). */
function quotedFlag(message: string): string | undefined {
  return /'(-{1,2}[^'\s]+)/.exec(message)?.[1];
}

/** The nearest flag of `options` to `flag` as `; did you mean "--X"?`, or "". */
function flagSuggestion(flag: string, options: ParseArgsOptionsConfig): string {
  const name = flag.replace(/^-+/, "").split("=")[0]!;
  const longs = Object.keys(options);
  if (!flag.startsWith("--") && name.length === 1) {
    // A single dash and one letter: a long flag given one dash ("-timeout") is the likelier typo below.
    return "";
  }
  return didYouMean(name, longs, "--");
}

/** The `E_USAGE` error for a `parseArgs` failure with `options`. */
export function flagError(error: unknown, options: ParseArgsOptionsConfig): UsageError {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  const flag = quotedFlag(message);
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && flag !== undefined) {
    const shown = clip(flag);
    return new UsageError(`Unknown flag "${shown}"${flagSuggestion(flag, options)}`, {
      cause: error,
      details: { flag: shown },
    });
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && flag !== undefined) {
    const shown = clip(flag);
    if (message.includes("does not take an argument")) {
      return new UsageError(`Flag "${shown}" takes no value`, { cause: error, details: { flag: shown } });
    }
    // "argument missing", or "ambiguous" (the next word begins with a dash: another flag, not a value).
    return new UsageError(
      `Flag "${shown}" needs a value (a value that begins with "-" is written ${shown}=-VALUE)`,
      { cause: error, details: { flag: shown } },
    );
  }
  return new UsageError(message.split("\n")[0]!.replace(/\.$/, ""), { cause: error });
}
