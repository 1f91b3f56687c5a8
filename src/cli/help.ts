/**
 * Help texts of the `specter` command: the overview, and each command's help rendered from its
 * {@link CommandDoc} (the flag tables the command parses with).
 *
 * @module
 */
import { VERSION } from "../version.ts";
import { AUDIT_DOC } from "./audit.ts";
import { EXEC_DOC } from "./exec.ts";
import type { CommandDoc } from "./flag_table.ts";
import { formatHelp } from "./help_format.ts";
import { POLICY_DOC } from "./policy.ts";
import { REPLAY_DOC } from "./replay.ts";
import { RUN_DOC } from "./run.ts";
import { SANDBOX_DOC } from "./sandbox.ts";
import { TEST_DOC } from "./test.ts";
import { VERIFY_DOC } from "./verify.ts";
import { VIEW_DOC } from "./view.ts";
import { AGENT_DOC } from "./agent.ts";
import { MCP_DOC } from "./mcp.ts";
import { DAEMON_DOC } from "./daemon.ts";
import { KEEPER_DOC } from "./keeper.ts";
import { HISTORY_DOC } from "./history.ts";
import { URL_DOC } from "./url.ts";
import { ATTACH_DOC, KILL_DOC, LOGS_DOC, LS_DOC, NEW_DOC, SEND_DOC } from "./sessions.ts";

/** What Specter is, in one line (the overview's title, after the name and version). */
export const TAGLINE = "drive terminal programs through a real PTY as JSON frames";

/** The overview below the title: every command in one line, and the exit codes. */
export const OVERVIEW = `Usage:
  specter run  [flags] -- CMD ARGS…   Stream frames on stdout, read driver messages on stdin
  specter exec [flags] -- CMD ARGS…   Run to completion, print one JSON result
  specter policy check FILE|PRESET    Validate a policy file or preset, print every problem
  specter policy explain FILE|PRESET  What a policy allows and denies, in plain words
  specter policy render FILE|PRESET   The exact launch argv, seccomp table or Seatbelt profile, and hashes
  specter sandbox probe [--json]      Which sandbox backends can run here, and how to fix them
  specter test SCENARIO…              Run scenario files (spec/scenario.md); --json, --update-goldens
  specter replay DIR                  Re-run a scenario bundle and diff it with the recorded run
  specter replay report DIR           Print the latest replay's summary and diff
  specter verify GOLDEN -- CMD…       Diff a run's normalized screen/transcript with a golden (CI gate)
  specter audit verify FILE|RUN_DIR   Check an audit log's hash chain; prints the last hash to pin
  specter view [--mode M] FILE.cast   A recording in a token view (compact, parsed), as events or --text
  specter agent [flags]               Agent tools (exec_command, write_stdin, …) as JSON-RPC on stdio
  specter mcp [flags]                 The agent tools as an MCP server on stdio (Claude Code, Cursor, …)
  specter new NAME [flags] -- CMD…    Start a named session in the daemon, detached (like tmux new -d)
  specter attach NAME                 Attach this terminal to a session (Ctrl-] detaches)
  specter ls [--json]                 The daemon's sessions, running and ended
  specter send NAME TEXT… [--enter]   Type into a session (or --key, --signal, --resize)
  specter kill NAME [--purge]         End a session (--purge also removes its log)
  specter logs NAME [--cast FILE]     A session's frame log, from the state directory (or as .cast)
  specter history [--failed] [--json] Commands daemon sessions ran (SQLite command log)
  specter daemon [--bind HOST:PORT]   Run the per-user daemon (started on first use otherwise); --bind
                                      adds the web viewer and a WebSocket, for token holders
  specter daemon status|stop|listen|revoke   Control the running daemon (help daemon)
  specter url [--control] [NAME]      The web viewer's address, with a token after #
  specter keeper --state-dir DIR      Hold the daemon's terminals (started by the daemon)
  specter help <command>              Show help for a command
  specter --version

Exit codes: the program's own code; 124 timed out; 128+N killed by signal N;
2 usage error or no such session; 125 Specter failed; 126 not executable; 127 not found;
141 stdout closed by its reader (quietly, as | head -1 does).`;

/** Every command's doc, in the overview's order. */
export const COMMAND_DOCS: readonly CommandDoc[] = [
  RUN_DOC,
  EXEC_DOC,
  POLICY_DOC,
  SANDBOX_DOC,
  TEST_DOC,
  REPLAY_DOC,
  VERIFY_DOC,
  AUDIT_DOC,
  VIEW_DOC,
  AGENT_DOC,
  MCP_DOC,
  NEW_DOC,
  ATTACH_DOC,
  LS_DOC,
  SEND_DOC,
  KILL_DOC,
  LOGS_DOC,
  HISTORY_DOC,
  DAEMON_DOC,
  URL_DOC,
  KEEPER_DOC,
];

/** Help per command (`specter` is the overview). */
export const HELP: Readonly<Record<string, string>> = {
  specter: `specter ${VERSION}: ${TAGLINE}\n\n${OVERVIEW}`,
  ...Object.fromEntries(COMMAND_DOCS.map((doc) => [doc.name, formatHelp(doc)])),
};
