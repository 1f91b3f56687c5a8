/**
 * The `specter` command line: dispatches to a command and maps errors to exit codes.
 *
 * @module
 */
import { SessionError, toSpecterError, UsageError } from "../errors.ts";
import { VERSION } from "../version.ts";
import { auditCommand } from "./audit.ts";
import { execCommand } from "./exec.ts";
import { exitCodeForError } from "./exit_codes.ts";
import { COMMAND_DOCS, HELP } from "./help.ts";
import { policyCommand } from "./policy.ts";
import { runCommand } from "./run.ts";
import { replayCommand } from "./replay.ts";
import { sandboxCommand } from "./sandbox.ts";
import { testCommand } from "./test.ts";
import { verifyCommand } from "./verify.ts";
import { viewCommand } from "./view.ts";
import { agentCommand } from "./agent.ts";
import { daemonCommand, keeperCommand } from "./daemon.ts";
import { attachCommand, killCommand, logsCommand, lsCommand, newCommand, sendCommand } from "./sessions.ts";

const encoder = new TextEncoder();

function out(text: string): void {
  const bytes = encoder.encode(text + "\n");
  try {
    for (let done = 0; done < bytes.length;) done += Deno.stdout.writeSync(bytes.subarray(done));
  } catch (error: unknown) {
    if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
    // `specter view … | head`: the reader went away. A typed end (exit 141, like a shell's SIGPIPE).
    throw new SessionError("E_STDOUT_CLOSED", "Nobody reads the output any more (stdout is a closed pipe)", {
      cause: error,
    });
  }
}

function err(text: string): void {
  Deno.stderr.writeSync(encoder.encode(text + "\n"));
}

/** Runs the CLI with `args`; resolves with the exit code. Errors go to stderr as `specter: CODE: message`. */
export async function runCli(args: readonly string[]): Promise<number> {
  const [command, ...rest] = args;
  try {
    if (rest.includes("--help") || rest.includes("-h")) {
      const dash = rest.indexOf("--");
      const before = dash < 0 ? rest : rest.slice(0, dash);
      if (before.includes("--help") || before.includes("-h")) return help(command);
    }
    switch (command) {
      case undefined:
      case "--help":
      case "-h":
        return help(undefined);
      case "--version":
      case "-V":
        if (rest.length > 0) throw new UsageError(`Unexpected argument "${rest[0]}" after ${command}`);
        out(`specter ${VERSION}`);
        return 0;
      case "help":
        if (rest.length > 1) {
          throw new UsageError(`Unexpected argument "${rest[1]}" (specter help [COMMAND])`);
        }
        return help(rest[0]);
      case "run":
        return await runCommand(rest);
      case "exec":
        return await execCommand(rest, out, err);
      case "sandbox":
        return sandboxCommand(rest, out);
      case "test":
        return await testCommand(rest, out);
      case "replay":
        return await replayCommand(rest, out, err);
      case "verify":
        return await verifyCommand(rest, out, err);
      case "policy":
        return await policyCommand(rest, out, err);
      case "audit":
        return auditCommand(rest, out);
      case "view":
        return await viewCommand(rest, out);
      case "agent":
        return await agentCommand(rest, out, err);
      case "daemon":
        return await daemonCommand(rest, err);
      case "keeper":
        return await keeperCommand(rest);
      case "new":
        return await newCommand(rest, out);
      case "attach":
        return await attachCommand(rest, err);
      case "ls":
        return await lsCommand(rest, out);
      case "send":
        return await sendCommand(rest);
      case "kill":
        return await killCommand(rest);
      case "logs":
        return await logsCommand(rest, out, err);
      default:
        throw new UsageError(`Unknown command "${command}" (try: specter help)`);
    }
  } catch (error: unknown) {
    const failure = toSpecterError(error);
    err(`specter: ${failure.code}: ${failure.message}`);
    return exitCodeForError(failure.code);
  }
}

function help(command: string | undefined): number {
  const text = HELP[command ?? "specter"];
  if (text === undefined) {
    const commands = COMMAND_DOCS.map((doc) => doc.name).join(", ");
    throw new UsageError(`No help for "${command}" (commands: ${commands})`);
  }
  out(text);
  return 0;
}
