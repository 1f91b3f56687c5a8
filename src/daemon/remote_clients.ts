/**
 * Remote clients: the daemon's TCP listener (`--bind`: the web viewer, the JSON-RPC on a WebSocket and
 * MCP over HTTP, for token holders), started, replaced and stopped, with its audit log
 * (`STATE/remote/audit.ndjson`) and `remote.json` (for `specter url`). What each token may do is
 * `remote_access.ts`'s; the WebSocket clients themselves are served as every peer is.
 *
 * @module
 */
import { join } from "node:path";
import { AuditLog } from "../artifacts/mod.ts";
import { type Peer, type PeerHost, RemoteServer, type WsPeer } from "../remote/mod.ts";
import type { AgentTools } from "../agent/mod.ts";
import type { McpHttp } from "../mcp/mod.ts";
import type { DaemonLog, RemoteListen } from "./options.ts";

/** Removes a dead daemon's `remote.json` (its TCP address and tokens): a new daemon writes its own. */
export function forgetRemote(stateDir: string): void {
  try {
    // A dead daemon's TCP address and tokens (specter url would print them): this one writes its own.
    Deno.removeSync(join(stateDir, "remote.json"));
  } catch {
    // None was left.
  }
}

/** The TCP listener, when there is one. */
export class RemoteClients {
  #remote: RemoteServer | null = null;
  #remoteAudit: AuditLog | null = null;
  /** The `/mcp` endpoint, once a client used it. */
  #mcp: McpHttp | null = null;
  readonly #stateDir: string;
  readonly #host: PeerHost;
  readonly #accepted: (peer: Peer) => void;
  readonly #mcpTools: () => Promise<AgentTools>;
  readonly #log: DaemonLog;

  /**
   * `host` serves the clients' lines, `accepted` is told of each client, `mcpTools` gives the agent tools
   * of MCP clients.
   */
  constructor(
    stateDir: string,
    host: PeerHost,
    accepted: (peer: Peer) => void,
    mcpTools: () => Promise<AgentTools>,
    log: DaemonLog,
  ) {
    this.#stateDir = stateDir;
    this.#host = host;
    this.#accepted = accepted;
    this.#mcpTools = mcpTools;
    this.#log = log;
  }

  /** The TCP listener's address, when it listens. */
  get url(): string | null {
    return this.#remote?.url ?? null;
  }

  /** Starts the TCP listener, its audit log, and `remote.json` (for `specter url`). */
  async listen(listen: RemoteListen): Promise<void> {
    const dir = join(this.#stateDir, "remote");
    const audit = AuditLog.open(dir, `daemon-${Deno.pid}-${Date.now()}`);
    this.#remoteAudit = audit;
    this.#remote = await RemoteServer.start({
      ...listen,
      audit,
      log: (text) => this.#log(text),
      host: {
        // The peer waits for its calls (a few at a time): a client cannot queue unbounded work.
        line: (peer, line) => this.#host.line(peer, line),
        closed: (peer, reason) => this.#host.closed(peer, reason),
      },
      accepted: (peer: WsPeer) => this.#accepted(peer),
      mcp: async (request) => {
        // MCP (and the agent tools) load with the first request to /mcp: most daemons serve none.
        if (this.#mcp === null) {
          const { McpHttp } = await import("../mcp/mod.ts");
          // Every MCP client's sessions run as a remote client's agent (see `AgentBridge.forMcp`).
          this.#mcp ??= new McpHttp(() => this.#mcpTools());
        }
        return await this.#mcp.handle(request);
      },
    });
    this.#log(`listening on ${this.#remote.url} too (the web viewer and ${"/v1/ws"}; audit in "${dir}")`);
  }

  /**
   * Replaces the TCP listener: the current one closes with its connections, then `listen` starts, or none.
   * When the new one cannot start, none listens (the error is thrown). Resolves with its address.
   */
  async relisten(listen: RemoteListen | null): Promise<string | null> {
    if (this.#remote !== null) {
      const old = this.#remote;
      this.#remote = null;
      await old.close();
      this.#log(`stopped listening on ${old.url}`);
    }
    this.#remoteAudit?.close();
    this.#remoteAudit = null;
    if (listen === null) return null;
    try {
      await this.listen(listen);
    } catch (error: unknown) {
      // listen opened the audit log before the server failed to start.
      (this.#remoteAudit as AuditLog | null)?.close();
      this.#remoteAudit = null;
      this.#remote = null;
      throw error;
    }
    return this.url;
  }

  /** Stops the listener and MCP, removes `remote.json`, closes the audit log (also of one never started). */
  async close(): Promise<void> {
    this.#mcp?.close();
    if (this.#remote !== null) {
      await this.#remote.close();
      try {
        Deno.removeSync(join(this.#stateDir, "remote.json"));
      } catch {
        // Not written, or removed by someone else.
      }
    }
    this.#remoteAudit?.close(); // Also when the listener could not start.
  }
}
