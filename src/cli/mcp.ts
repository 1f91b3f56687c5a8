/**
 * `specter mcp [flags]`: the agent tools as a Model Context Protocol server on stdin/stdout (see
 * `src/mcp/`), for agent hosts (Claude Code, Cursor, VS Code, Codex CLI…): `claude mcp add specter --
 * specter mcp`. It takes the policy and session flags `specter agent` takes.
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import { serveMcpStdio } from "../mcp/mod.ts";
import { parseCommandLine } from "./flags.ts";
import type { CommandDoc, FlagTable } from "./flag_table.ts";
import { sessionGroupsWithout } from "./session_flags.ts";
import { AGENT_FLAGS, agentTools, netsClosed } from "./agent.ts";

const MCP_FLAGS = {
  "max-sessions": AGENT_FLAGS["max-sessions"],
  "idle-timeout": AGENT_FLAGS["idle-timeout"],
  "output-log-max": AGENT_FLAGS["output-log-max"],
  "output-log-total": AGENT_FLAGS["output-log-total"],
} as const satisfies FlagTable;

/** `specter mcp`'s help. */
export const MCP_DOC: CommandDoc = {
  name: "mcp",
  usage: ["specter mcp [flags]"],
  about: `Serves the agent tools as an MCP server (Model Context Protocol, revisions 2025-11-25,
2025-06-18 and 2025-03-26) on stdin/stdout, one JSON-RPC message per line; logs go to stderr only (spec/agent.md, "MCP").
Tools: exec_command, write_stdin, read_output, close_session, list_sessions, each with input and output
schemas; results carry the output and a status line, and the whole result as structuredContent. Progress
notifications while a call runs, notifications/cancelled (the program gets ctrl-c), logging/setLevel, ping.
Every session runs under the sandbox and policy given here (default: the agent preset); no tool argument can
change it. Exits 0 when stdin ends, after ending every session.
The daemon serves the same over HTTP at /mcp (specter daemon --bind).
  claude mcp add specter -- specter mcp`,
  // Its sessions are an agent's (see agent's help): no one recording, id or artifacts directory.
  groups: [
    { title: "MCP flags", flags: MCP_FLAGS },
    ...sessionGroupsWithout(["record", "record-input", "id", "artifacts"], "agent"),
  ],
};

/** Runs `specter mcp ARGS`; resolves with the exit code once stdin ends. */
export async function mcpCommand(
  args: readonly string[],
  warn: (text: string) => void,
): Promise<number> {
  const { values, command } = parseCommandLine(args, MCP_DOC);
  if (command.length > 0) throw new UsageError(`Unexpected argument "${command[0]!.slice(0, 80)}"`);
  const tools = agentTools(values, warn);
  await serveMcpStdio(tools, {
    input: Deno.stdin.readable,
    write: async (bytes) => {
      for (let done = 0; done < bytes.length;) done += await Deno.stdout.write(bytes.subarray(done));
    },
  });
  await netsClosed();
  return 0;
}
