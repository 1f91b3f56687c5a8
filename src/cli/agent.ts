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
import { type FlagValues, parseCommandLine, sessionOptions, UNSAFE_BANNER } from "./flags.ts";
import { parseCount, parseDuration } from "./units.ts";
import type { CommandDoc, FlagTable } from "./flag_table.ts";
import { SESSION_GROUPS } from "./session_flags.ts";
import { auditError, auditFrame, auditLaunch, startRunAudit } from "./audit_run.ts";
import { openSessionRows, type SessionRows } from "./history_rows.ts";
import { CLIENT_FLAGS, connectDaemon } from "./daemon_client.ts";
import type { SpawnOptions } from "../session/mod.ts";
import { AGENT_DEFAULT_PRESET } from "../policy/mod.ts";

const AGENT_FLAGS = {
  daemon: {
    type: "boolean",
    description: "Serve the tools from the daemon: sessions live there (named agent-N), outlive this " +
      "process, and an agent that starts again finds them with list_sessions",
  },
  ...CLIENT_FLAGS,
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
runs under the sandbox and policy given here (default: the "agent" preset, spec/agent.md); no tool argument
can change it.
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
  if (values.daemon === true) return await agentViaDaemon(values);
  const base = agentBase(values);
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
      // The agent's commands go to the command log as a daemon's sessions' do (author: agent).
      let rows: SessionRows | null = null;
      return {
        id: audit.runId,
        artifacts: audit.dir,
        launched: (session) => {
          auditLaunch(audit, session);
          rows = openSessionRows(session, "agent", warn);
        },
        frame: (frame) => {
          auditFrame(audit, frame);
          rows?.frame(frame);
        },
        failed: (error) => auditError(audit, error),
        close: () => {
          audit.log.close();
          rows?.close();
        },
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

/** The options every agent session starts from, from `specter agent`'s flags. */
export function agentBase(values: FlagValues): Omit<SpawnOptions, "argv"> {
  for (const name of ["record", "record-input", "id", "artifacts"]) {
    if (values[name] !== undefined && values[name] !== false) {
      throw new UsageError(
        `Flag "--${name}" names one run; agent sessions are many (each has its own audit log)`,
      );
    }
  }
  // Without --policy, the agent preset: an agent's shell strings run ls, grep and git in the project.
  const { argv: _, ...options } = sessionOptions(values, ["/bin/true"], AGENT_DEFAULT_PRESET);
  // Agent sessions are short and many: the inline reactor. The reader thread (for high output rates) starts
  // with a session's first terminal and stops with its last, which would add about 30 ms to every call.
  return { ...options, readerThread: false };
}

/** The daemon's flags, not the sessions': they stay here. */
const CLIENT_ONLY = [
  "daemon",
  "socket",
  "state-dir",
  "no-autostart",
  "help",
  "schema",
  "max-sessions",
  "idle-timeout",
];

/**
 * `specter agent --daemon`: a proxy. The daemon serves the tools on this connection (`agent.open`), with
 * the session flags given here; lines go through unchanged both ways until stdin ends. The sessions stay.
 */
async function agentViaDaemon(values: FlagValues): Promise<number> {
  const client = await connectDaemon(values);
  const flags: Record<string, string | boolean | string[]> = {};
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined || CLIENT_ONLY.includes(key)) continue;
    flags[key] = Array.isArray(value) ? value.map(String) : value;
  }
  await client.call("agent.open", { cwd: typeof values.cwd === "string" ? values.cwd : Deno.cwd(), flags });
  const encoder = new TextEncoder();
  let writing = Promise.resolve();
  // Requests sent and not answered yet: when stdin ends, their answers are still awaited.
  const waiting = new Set<string>();
  let settled = () => {};
  client.onLine = (line) => {
    const id = idOf(line);
    if (id !== null && waiting.delete(id) && waiting.size === 0) settled();
    const bytes = encoder.encode(line + "\n");
    writing = writing.then(async () => {
      for (let done = 0; done < bytes.length;) done += await Deno.stdout.write(bytes.subarray(done));
    });
  };
  let carry = "";
  const decoder = new TextDecoder();
  for await (const chunk of Deno.stdin.readable) {
    carry += decoder.decode(chunk, { stream: true });
    const lines = carry.split("\n");
    carry = lines.pop()!;
    for (const line of lines) {
      const id = idOf(line);
      if (id !== null) waiting.add(id);
      await client.sendRaw(encoder.encode(line + "\n"));
    }
  }
  if (carry !== "") await client.sendRaw(encoder.encode(carry + "\n"));
  if (waiting.size > 0) {
    await Promise.race([client.closedPromise, new Promise<void>((resolve) => settled = resolve)]);
  }
  client.close();
  await writing;
  return 0;
}

/** The JSON-RPC id of a line (as a string), or null for a notification or a line that is not JSON. */
function idOf(line: string): string | null {
  try {
    const id = (JSON.parse(line) as { id?: unknown }).id;
    return typeof id === "string" || typeof id === "number" ? JSON.stringify(id) : null;
  } catch {
    return null; // Not JSON: the daemon answers it (with a null id).
  }
}
