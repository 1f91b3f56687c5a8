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
import { parseCount, parseDuration, parseSize } from "./units.ts";
import type { CommandDoc, FlagTable } from "./flag_table.ts";
import { sessionGroupsWithout } from "./session_flags.ts";
import { auditError, auditFrame, auditLaunch, startRunAudit } from "./audit_run.ts";
import { type RunNet, startRunNet } from "./net_run.ts";
import { openSessionRows, type SessionRows } from "./history_rows.ts";
import { CLIENT_FLAGS, connectDaemon } from "./daemon_client.ts";
import type { SpawnOptions } from "../session/mod.ts";
import { AgentOutputLogs, DEFAULT_SESSION_LOG_BYTES, DEFAULT_TOTAL_LOG_BYTES } from "../daemon/mod.ts";
import { join } from "node:path";
import { AGENT_DEFAULT_PRESET } from "../policy/mod.ts";

/** `specter agent`'s own flags (`specter mcp` shares its limits). */
export const AGENT_FLAGS = {
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
    description: "Most sessions held at once (default 64); at the cap one is ended for a new one and the " +
      "result names it: never one with a call in progress nor one of the 8 most recently used; the least " +
      "recently used exited one first, else the least recently used; when none may go, E_SESSION_LIMIT",
  },
  "idle-timeout": {
    type: "string",
    value: "DUR",
    description: "End a session nobody called and that printed nothing for DUR (default 30m); it is " +
      "listed with timed_out true",
  },
  "output-log-max": {
    type: "string",
    value: "SIZE",
    description: "Disk budget of one session's output log, which keeps every frame for read_output in the " +
      "session's audit directory (default 256MiB; its oldest 1 MiB segments go first; 0: no log, " +
      "read_output has the first 64 KiB and the last MiB in memory); with --daemon, the daemon's own log",
  },
  "output-log-total": {
    type: "string",
    value: "SIZE",
    description: "Disk budget of all sessions' output logs together (default 1GiB; the oldest segments of " +
      "any session go first)",
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
  // Agent sessions are many, each with its own audit log: no one recording, id or artifacts directory.
  groups: [
    { title: "Agent flags", flags: AGENT_FLAGS },
    ...sessionGroupsWithout(["record", "record-input", "id", "artifacts"], "agent"),
  ],
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
  const tools = agentTools(values, warn);
  await serveAgent(tools, {
    input: Deno.stdin.readable,
    write: async (bytes) => {
      for (let done = 0; done < bytes.length;) done += await Deno.stdout.write(bytes.subarray(done));
    },
  });
  await netsClosed();
  return 0;
}

/** Sessions' network proxies still closing (their last connections audited): awaited before exiting. */
const closingNets = new Set<Promise<void>>();

/** Resolves once every agent session's proxy and relay has closed (`agent` and `mcp` wait before exiting). */
export async function netsClosed(): Promise<void> {
  while (closingNets.size > 0) await Promise.allSettled([...closingNets]);
}

/**
 * The agent tools `specter agent` and `specter mcp` serve, from their flags: every session under the
 * policy and sandbox given, each with its own audit log and rows in the command log.
 */
export function agentTools(values: FlagValues, warn: (text: string) => void): AgentTools {
  const base = agentBase(values);
  if (base.sandbox?.mode === "none") warn(UNSAFE_BANNER);
  const maxSessions = typeof values["max-sessions"] === "string"
    ? parseCount(values["max-sessions"], "max-sessions")
    : undefined;
  if (maxSessions === 0) throw new UsageError('Flag "--max-sessions" must be at least 1');
  const idleTimeoutMs = typeof values["idle-timeout"] === "string"
    ? parseDuration(values["idle-timeout"], "idle-timeout")
    : undefined;
  const logs = outputLogs(values);
  return new AgentTools({
    base,
    ...(logs === null ? {} : {
      // In the session's audit directory: private (0700) and out of every sandbox's sight and reach.
      outputLog: (id: string, artifacts: string | undefined) =>
        artifacts === undefined ? null : logs.open(join(artifacts, "frames"), id),
    }),
    ...(maxSessions === undefined ? {} : { maxSessions }),
    ...(idleTimeoutMs === undefined ? {} : { idleTimeoutMs }),
    audit: (argv, cwd): SessionAudit => {
      const audit = startRunAudit({ ...values, cwd, id: undefined, artifacts: undefined }, argv, "agent");
      // A network allow list: each session has its own proxy, so its connections go to its own audit log.
      let net: RunNet | null;
      try {
        net = startRunNet(base, audit.log);
      } catch (error: unknown) {
        auditError(audit, error);
        audit.log.close();
        throw error;
      }
      // The agent's commands go to the command log as a daemon's sessions' do (author: agent).
      let rows: SessionRows | null = null;
      return {
        id: audit.runId,
        artifacts: audit.dir,
        ...(net === null ? {} : { netRelay: net.relay }),
        launched: (session) => {
          net?.attach(session);
          auditLaunch(audit, session);
          rows = openSessionRows(session, "agent", warn);
        },
        frame: (frame) => {
          auditFrame(audit, frame);
          rows?.frame(frame);
        },
        failed: (error) => auditError(audit, error),
        close: () => {
          rows?.close();
          // The proxy's last connections are audited as it closes: the log is closed after it.
          if (net === null) audit.log.close();
          else {
            const done = net.close().then(() => audit.log.close());
            closingNets.add(done);
            void done.finally(() => closingNets.delete(done));
          }
        },
      };
    },
  });
}

/** The output logs `--output-log-max` and `--output-log-total` ask for; null for `--output-log-max 0`. */
export function outputLogs(values: FlagValues): AgentOutputLogs | null {
  const size = (name: string, fallback: number) =>
    typeof values[name] === "string" ? parseSize(values[name] as string, name) : fallback;
  const sessionBytes = size("output-log-max", DEFAULT_SESSION_LOG_BYTES);
  const totalBytes = size("output-log-total", DEFAULT_TOTAL_LOG_BYTES);
  if (sessionBytes === 0) return null;
  if (totalBytes < sessionBytes) {
    throw new UsageError('Flag "--output-log-total" must be at least "--output-log-max"');
  }
  return new AgentOutputLogs({ sessionBytes, totalBytes });
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
  "output-log-max",
  "output-log-total",
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
