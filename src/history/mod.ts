/**
 * The command log (`specter history`): every command sessions ran, in SQLite.
 *
 * @module
 */
export {
  type AuthorKind,
  CommandLog,
  type CommandRecord,
  type CommandRow,
  defaultCommandLogPath,
  type HistoryQuery,
  MIGRATIONS,
  OUTPUT_CAP,
  type Reporter,
} from "./command_log.ts";
