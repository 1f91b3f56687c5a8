/**
 * `specter history`: the command log, queried (reads the SQLite file; no daemon needed).
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import { CommandLog, defaultCommandLogPath } from "../history/mod.ts";
import { printable } from "../terminal/mod.ts";
import { parseFlags } from "./flags.ts";
import { type CommandDoc, commandOptions, type FlagTable, HELP_FLAG } from "./flag_table.ts";
import { HISTORY_FLAG } from "./daemon.ts";
import { parseCount } from "./units.ts";

const FLAGS = {
  session: { type: "string", value: "NAME", description: "Only this session's commands" },
  failed: { type: "boolean", description: "Only commands that failed (non-zero exit or a signal)" },
  grep: { type: "string", value: "TEXT", description: "Only commands whose text contains TEXT" },
  limit: { type: "string", value: "N", description: "The latest N commands (default 1000)" },
  json: { type: "boolean", description: "One JSON row per line, output included" },
  ...HISTORY_FLAG,
  ...HELP_FLAG,
} as const satisfies FlagTable;

/** `specter history`'s help. */
export const HISTORY_DOC: CommandDoc = {
  name: "history",
  usage: ["specter history [--session NAME] [--failed] [--grep TEXT] [--json]"],
  about: `Prints the commands sessions ran (from their shells' OSC 133 marks, or the program itself): when,
the exit code or signal and who reported it (specter: the kernel's wait status; shell: Specter's shell
integration, whose marks only the shell can make; output: marks any program in the session could print;
unknown: a row from before 0.7), how long, who typed it (author_kind human, agent or remote, as Specter knows
it from the connection), and the command. --json adds the working directory, the output (plain text, capped
at 64 KiB, the cap and the original size recorded), the policy hash and the frames it covers. Schema:
spec/data-model.md.`,
  groups: [{ title: "Flags", flags: FLAGS }],
};

/** Runs `specter history`. */
export function historyCommand(args: readonly string[], out: (text: string) => void): number {
  const { values, positionals } = parseFlags(args, commandOptions(HISTORY_DOC));
  if (positionals.length > 0) throw new UsageError(`Unexpected argument "${positionals[0]!.slice(0, 80)}"`);
  const path = typeof values.history === "string" ? values.history : defaultCommandLogPath();
  const log = CommandLog.open(path);
  try {
    const rows = log.query({
      ...(typeof values.session === "string" ? { session: values.session } : {}),
      ...(values.failed === true ? { failed: true } : {}),
      ...(typeof values.grep === "string" ? { grep: values.grep } : {}),
      ...(typeof values.limit === "string" ? { limit: parseCount(values.limit, "limit") } : {}),
    });
    for (const row of rows) {
      if (values.json === true) {
        out(JSON.stringify(row));
        continue;
      }
      const when = new Date(row.started_at * 1000).toISOString().replace("T", " ").slice(0, 19);
      const status = row.signal !== null ? row.signal : String(row.exit_code ?? "?");
      // The command line is what was typed (by a person or an agent) or the program's argv: it may hold
      // control characters, printed escaped so that the row stays one line of text on the reader's terminal.
      const fields = [
        when,
        row.session,
        status,
        row.reported_by,
        `${Math.round(row.duration_ms)}ms`,
        row.author_kind,
        row.command,
      ];
      out(fields.map(printable).join("\t"));
    }
    return 0;
  } finally {
    log.close();
  }
}
