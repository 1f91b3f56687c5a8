/**
 * The agent bridge: the agent tools the daemon serves (`agent.open` on its socket, MCP over HTTP on its
 * listener), one set per directory and flags, whose sessions are the daemon's own named `agent-N`
 * sessions (read through their durable frame logs, and found again after a restart).
 *
 * @module
 */
import { join } from "node:path";
import type { z } from "zod";
import { UsageError } from "../errors.ts";
import type { AgentOpenParamsSchema } from "../protocol/mod.ts";
import type { Peer } from "../remote/mod.ts";
import type { AgentTools, OutputLog } from "../agent/mod.ts";
import { sessionOutputLog } from "./agent_output_log.ts";
import type { Launcher } from "./launcher.ts";
import type { Registry } from "./registry.ts";
import type { CreateParams, DaemonConfig, DaemonLog } from "./options.ts";

/** Who MCP clients over HTTP are, to the agent tools: remote clients holding a control token. */
const MCP_CLIENT = {
  name: "MCP over HTTP",
  access: { scope: "control", sessions: null, label: "MCP over HTTP" },
} as const satisfies Pick<Peer, "name" | "access">;

/** The agent tools by the flags and directory agents opened them with. */
export class AgentBridge {
  readonly #agents = new Map<string, AgentTools>();
  readonly #agentBase: DaemonConfig["agentBase"];
  readonly #registry: Registry;
  readonly #launcher: Launcher;
  readonly #log: DaemonLog;

  constructor(
    agentBase: DaemonConfig["agentBase"],
    registry: Registry,
    launcher: Launcher,
    log: DaemonLog,
  ) {
    this.#agentBase = agentBase;
    this.#registry = registry;
    this.#launcher = launcher;
    this.#log = log;
  }

  /**
   * The tools of MCP clients over HTTP: every one's sessions run as a remote client's agent with no flags
   * (the default policy), in "/" (a remote client names no host path); they outlive the MCP session that
   * started them.
   */
  forMcp(): Promise<AgentTools> {
    return this.tools(MCP_CLIENT, "/", {});
  }

  /**
   * The agent tools for `cwd` and `flags` (one set per directory and flags, remote clients' apart): made
   * with the first agent that asks, found again by every later one (`agent.open`, and MCP over HTTP).
   */
  async tools(
    connection: Pick<Peer, "name" | "access">,
    cwd: string,
    flags: CreateParams["flags"],
  ): Promise<AgentTools> {
    const agentBase = this.#agentBase;
    if (agentBase === undefined) throw new UsageError("This daemon serves no agent tools");
    // Remote clients' agents have tools of their own, which tell them of sessions that cannot start only
    // that they cannot (see `startFailure`).
    const remote = connection.access.scope !== "local";
    const sorted = Object.entries(flags).sort();
    const key = JSON.stringify(remote ? ["remote", cwd, sorted] : [cwd, sorted]);
    // The agent tools (and their tokenizer's tables) load with the first agent: most daemons serve none.
    const { AgentTools } = await import("../agent/mod.ts");
    let tools = this.#agents.get(key);
    if (tools === undefined) {
      let base;
      try {
        base = await agentBase(flags, cwd);
      } catch (error: unknown) {
        throw this.#launcher.startFailed(connection, error);
      }
      const who = remote ? connection : null;
      tools = new AgentTools({
        base,
        // read_output pages through the session's own durable frame log.
        outputLog: (name) => this.#outputLog(name),
        spawn: (options) => {
          try {
            return this.#launcher.launchForAgent(options, flags, key);
          } catch (error: unknown) {
            throw this.#launcher.startFailed(who, error);
          }
        },
      });
      this.#agents.set(key, tools);
      // Its sessions that a restarted daemon took back: the tools find them again (list_sessions, ids).
      for (const entry of this.#registry.values()) {
        if (entry.saved.agent_key === key && entry.session !== null && entry.exit === null) {
          tools.adopt(entry.name, entry.session, entry.saved.cwd);
        }
      }
    }
    return tools;
  }

  /**
   * Switches `connection` to the agent tools: answers request `id`, after which every line is theirs.
   */
  async open(
    connection: Peer,
    params: z.infer<typeof AgentOpenParamsSchema>,
    id: string | number | null,
  ): Promise<void> {
    const tools = await this.tools(connection, params.cwd, params.flags);
    const { serveAgent } = await import("../agent/mod.ts");
    connection.send({ jsonrpc: "2.0", id, result: { agent: true } });
    const input = new ReadableStream<Uint8Array>({
      start: (controller) => {
        connection.agentInput = controller;
      },
    });
    void serveAgent(
      tools,
      {
        input,
        write: (bytes) => {
          connection.sendBytes(bytes);
          return Promise.resolve();
        },
      },
      undefined,
      true,
    ).catch((error: unknown) => this.#log(`agent connection: ${String(error)}`));
  }

  /** The output log of an agent's session `name`: its durable frame log (none when it has no store). */
  #outputLog(name: string): OutputLog | null {
    const entry = this.#registry.get(name);
    if (entry === undefined || entry.store === null) return null;
    return sessionOutputLog(join(entry.dir, "frames"), () => entry.loggedTo);
  }
}
