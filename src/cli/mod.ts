/**
 * The `specter` command line, as a library (main.ts is a thin wrapper).
 *
 * @module
 */
export { runCli } from "./cli.ts";
export { runCommand, type RunIo } from "./run.ts";
export { execCommand } from "./exec.ts";
export { exitCodeForError, exitCodeForExit } from "./exit_codes.ts";
export { parseCount, parseDuration, parseSize } from "./units.ts";
