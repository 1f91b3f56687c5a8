/**
 * `specter` entry point: parses nothing itself, runs the CLI, exits with its code.
 *
 * @module
 */
import { runCli } from "./src/cli/cli.ts";

if (import.meta.main) Deno.exit(await runCli(Deno.args));
