/**
 * The `specter` command line: dispatches to a command and maps errors to exit codes.
 *
 * @module
 */
import { SessionError, toSpecterError, UsageError } from "../errors.ts";
import { VERSION } from "../version.ts";
import { didYouMean } from "../suggest.ts";
import { exitCodeForError } from "./exit_codes.ts";

/**
 * Every command's name, for "did you mean …?" without loading every command (help.ts's COMMAND_DOCS has
 * the same names: help_test.ts checks they agree).
 */
export const COMMAND_NAMES: readonly string[] = [
  "run",
  "exec",
  "policy",
  "sandbox",
  "test",
  "replay",
  "verify",
  "audit",
  "view",
  "agent",
  "mcp",
  "new",
  "attach",
  "ls",
  "send",
  "kill",
  "logs",
  "history",
  "daemon",
  "url",
  "keeper",
];

const encoder = new TextEncoder();

function out(text: string): void {
  writeOut(encoder.encode(text + "\n"));
}

/** Writes bytes to stdout (`exec` writes its result in pieces). */
function writeOut(bytes: Uint8Array): void {
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
      if (before.includes("--help") || before.includes("-h")) return await help(command);
    }
    switch (command) {
      case undefined:
      case "--help":
      case "-h":
        return await help(undefined);
      case "--version":
      case "-V":
        if (rest.length > 0) throw new UsageError(`Unexpected argument "${rest[0]}" after ${command}`);
        out(`specter ${VERSION}`);
        return 0;
      case "help":
        if (rest.length > 1) {
          throw new UsageError(`Unexpected argument "${rest[1]}" (specter help [COMMAND])`);
        }
        return await help(rest[0]);
      case "run":
        return await (await import("./run.ts")).runCommand(rest);
      case "exec":
        return await (await import("./exec.ts")).execCommand(rest, writeOut, err);
      case "sandbox":
        return (await import("./sandbox.ts")).sandboxCommand(rest, out);
      case "test":
        return await (await import("./test.ts")).testCommand(rest, out, err);
      case "replay":
        return await (await import("./replay.ts")).replayCommand(rest, out, err);
      case "verify":
        return await (await import("./verify.ts")).verifyCommand(rest, out, err);
      case "policy":
        return await (await import("./policy.ts")).policyCommand(rest, out, err);
      case "audit":
        return (await import("./audit.ts")).auditCommand(rest, out);
      case "view":
        return await (await import("./view.ts")).viewCommand(rest, out);
      case "agent":
        return await (await import("./agent.ts")).agentCommand(rest, out, err);
      case "mcp":
        return await (await import("./mcp.ts")).mcpCommand(rest, err);
      case "daemon":
        return await (await import("./daemon.ts")).daemonCommand(rest, err, out);
      case "keeper":
        return await (await import("./keeper.ts")).keeperCommand(rest);
      case "net-relay": // Hidden: started by a run with a network allow list (not in COMMAND_NAMES).
        return await (await import("./net_relay.ts")).netRelayCommand(rest, out);
      case "new":
        return await (await import("./sessions.ts")).newCommand(rest, out);
      case "attach":
        return await (await import("./sessions.ts")).attachCommand(rest, err);
      case "ls":
        return await (await import("./sessions.ts")).lsCommand(rest, out);
      case "send":
        return await (await import("./sessions.ts")).sendCommand(rest);
      case "kill":
        return await (await import("./sessions.ts")).killCommand(rest);
      case "history":
        return (await import("./history.ts")).historyCommand(rest, out);
      case "logs":
        return await (await import("./sessions.ts")).logsCommand(rest, out, err, writeOut);
      case "url":
        return await (await import("./url.ts")).urlCommand(rest, out);
      default:
        throw new UsageError(
          `Unknown command "${command.slice(0, 80)}"${
            didYouMean(command, [...COMMAND_NAMES, "help"])
          } (specter help lists the commands)`,
        );
    }
  } catch (error: unknown) {
    const failure = toSpecterError(error);
    // `specter ls | head -1`: the reader had what it wanted. Quiet, as `git log | head -1` is, with the
    // status a shell gives a writer its reader left (141). `run` still says it: its reader is a driver,
    // and the program it drove was stopped for it (spec/protocol.md).
    if (failure.code !== "E_STDOUT_CLOSED" || command === "run") {
      err(`specter: ${failure.code}: ${failure.message}`);
    }
    return exitCodeForError(failure.code);
  }
}

/** Help loads every command's documentation (and so every command): only when asked for. */
async function help(command: string | undefined): Promise<number> {
  const { COMMAND_DOCS, HELP } = await import("./help.ts");
  const text = HELP[command ?? "specter"];
  if (text === undefined) {
    const commands = COMMAND_DOCS.map((doc) => doc.name).join(", ");
    throw new UsageError(
      `No help for "${command?.slice(0, 80)}"${
        didYouMean(command ?? "", COMMAND_NAMES)
      } (commands: ${commands})`,
    );
  }
  out(text);
  return 0;
}
