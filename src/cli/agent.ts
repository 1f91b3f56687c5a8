/**
 * `specter agent [flags]`: the agent tools as JSON-RPC 2.0 over NDJSON on stdin/stdout (see
 * `src/agent/server.ts`), or with `--schema FLAVOUR` their function-calling definitions.
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import {
  AgentTools,
  serveAgent,
  type SessionAudit,
  TOOL_SCHEMA_FLAVOURS,
  toolDefinitions,
} from "../agent/mod.ts";
import { parseCommandLine, sessionOptions, UNSAFE_BANNER } from "./flags.ts";
import { parseCount, parseDuration } from "./units.ts";
import type { CommandDoc, FlagTable } from "./flag_table.ts";
import { SESSION_GROUPS } from "./session_flags.ts";
import { auditError, auditFrame, auditLaunch, startRunAudit } from "./audit_run.ts";

const AGENT_FLAGS = {
  schema: {
    type: "string",
    value: "FLAVOUR",
    description: "Print the tools' function-calling definitions and exit: openai, anthropic or jsonschema",
  },
  "max-sessions": {
    type: "string",
    value: "N",
    description: "Most sessions held at once (default 64); at the cap the least recently used exited " +
      "session is ended first, else the least recently used one, and the result names it",
  },
  "idle-timeout": {
    type: "string",
    value: "DUR",
    description: "End a session nobody called and that printed nothing for DUR (default 30m); it is " +
      "listed with timed_out true",
  },
} as const satisfies FlagTable;

/** `specter agent`'s help. */
export const AGENT_DOC: CommandDoc = {
  name: "agent",
  usage: ["specter agent [flags]", "specter agent --schema openai|anthropic|jsonschema"],
  about: `Serves the agent tools as JSON-RPC 2.0 over NDJSON on stdin/stdout, one request or response per
line (spec/agent.md): exec_command, write_stdin, read_output, close_session, list_sessions, and
session.subscribe / session.unsubscribe for programs (frames as session.frame notifications). Every session
runs under the sandbox and policy given here (default: the default preset); no tool argument can change it.
Sessions get PAGER=cat, GIT_PAGER=cat and NO_COLOR=1 (TERM stays xterm-256color). Exits 0 when stdin ends,
after ending every session.
  echo '{"jsonrpc":"2.0","id":1,"method":"exec_command","params":{"cmd":"echo hi"}}' | specter agent`,
  groups: [{ title: "Agent flags", flags: AGENT_FLAGS }, ...SESSION_GROUPS],
};

/** Runs `specter agent ARGS`; resolves with the exit code once stdin ends. */
export async function agentCommand(
  args: readonly string[],
  out: (text: string) => void,
  warn: (text: string) => void,
): Promise<number> {
  const { values, command } = parseCommandLine(args, AGENT_DOC);
  if (command.length > 0) throw new UsageError(`Unexpected argument "${command[0]!.slice(0, 80)}"`);
  if (typeof values.schema === "string") {
    const flavour = values.schema;
    if (!(TOOL_SCHEMA_FLAVOURS as readonly string[]).includes(flavour)) {
      throw new UsageError(
        `Flag "--schema" must be openai, anthropic or jsonschema, got "${flavour.slice(0, 80)}"`,
      );
    }
    out(JSON.stringify(toolDefinitions(flavour as typeof TOOL_SCHEMA_FLAVOURS[number]), null, 2));
    return 0;
  }
  for (const name of ["record", "record-input", "id", "artifacts"]) {
    if (values[name] !== undefined && values[name] !== false) {
      throw new UsageError(
        `Flag "--${name}" names one run; agent sessions are many (each has its own audit log)`,
      );
    }
  }
  const { argv: _, ...options } = sessionOptions(values, ["/bin/true"]);
  // Agent sessions are short and many: the inline reactor. The reader thread (for high output rates) starts
  // with a session's first terminal and stops with its last, which would add about 30 ms to every call.
  const base = { ...options, readerThread: false };
  if (base.sandbox?.mode === "none") warn(UNSAFE_BANNER);
  const maxSessions = typeof values["max-sessions"] === "string"
    ? parseCount(values["max-sessions"], "max-sessions")
    : undefined;
  if (maxSessions === 0) throw new UsageError('Flag "--max-sessions" must be at least 1');
  const idleTimeoutMs = typeof values["idle-timeout"] === "string"
    ? parseDuration(values["idle-timeout"], "idle-timeout")
    : undefined;
  const tools = new AgentTools({
    base,
    ...(maxSessions === undefined ? {} : { maxSessions }),
    ...(idleTimeoutMs === undefined ? {} : { idleTimeoutMs }),
    audit: (argv, cwd): SessionAudit => {
      const audit = startRunAudit({ ...values, cwd, id: undefined, artifacts: undefined }, argv, "agent");
      return {
        id: audit.runId,
        artifacts: audit.dir,
        launched: (session) => auditLaunch(audit, session),
        frame: (frame) => auditFrame(audit, frame),
        failed: (error) => auditError(audit, error),
        close: () => audit.log.close(),
      };
    },
  });
  await serveAgent(tools, {
    input: Deno.stdin.readable,
    write: async (bytes) => {
      for (let done = 0; done < bytes.length;) done += await Deno.stdout.write(bytes.subarray(done));
    },
  });
  return 0;
}
