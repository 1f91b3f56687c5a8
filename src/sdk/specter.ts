/**
 * The agent tools in-process: `specter.exec(cmd, opts)` returns exactly what `exec_command` returns over
 * JSON-RPC, without a `specter agent` process; a `SessionPool` leases persistent shells.
 *
 * @module
 */
import { AgentTools, type ToolOptions } from "../agent/mod.ts";
import { SessionError } from "../errors.ts";
import type {
  CloseSessionParams,
  ExecCommandParams,
  ReadOutputParams,
  SessionListing,
  ToolResult,
  WriteStdinParams,
} from "../protocol/mod.ts";

/** The tools of one host: the same calls as the JSON-RPC server's, with the same results. */
export interface Specter {
  /** `exec_command`: `cmd` is a shell line or an argv; the other fields are the tool's. */
  exec(cmd: string | readonly string[], options?: Omit<ExecCommandParams, "cmd">): Promise<ToolResult>;
  writeStdin(params: WriteStdinParams): Promise<ToolResult>;
  readOutput(params: ReadOutputParams): Promise<ToolResult>;
  closeSession(params: CloseSessionParams): Promise<ToolResult>;
  listSessions(): SessionListing[];
  /** Ends every session. */
  close(): Promise<void>;
}

/** Tools for a host with `options` (the sandbox and policy every session runs under: `options.base`). */
export function createSpecter(options: ToolOptions = { base: {} }): Specter {
  const tools = new AgentTools(options);
  return {
    exec: (cmd, rest = {}) => tools.execCommand({ ...rest, cmd: typeof cmd === "string" ? cmd : [...cmd] }),
    writeStdin: (params) => tools.writeStdin(params),
    readOutput: (params) => tools.readOutput(params),
    closeSession: (params) => tools.closeSession(params),
    listSessions: () => tools.listSessions().sessions,
    close: () => tools.close(),
  };
}

let shared: Specter | null = null;
const sharedTools = (): Specter => shared ??= createSpecter();

/**
 * The default tools (the strict preset, in the bwrap sandbox), made on first use: `await
 * specter.exec("make test")`. `specter.close()` ends their sessions.
 */
export const specter: Specter = {
  exec: (cmd, options) => sharedTools().exec(cmd, options),
  writeStdin: (params) => sharedTools().writeStdin(params),
  readOutput: (params) => sharedTools().readOutput(params),
  closeSession: (params) => sharedTools().closeSession(params),
  listSessions: () => shared?.listSessions() ?? [],
  close: async () => {
    const tools = shared;
    shared = null;
    await tools?.close();
  },
};

/** A leased shell: `exec` runs a command line and returns when the shell marks it finished. */
export interface Lease {
  readonly sessionId: string;
  exec(
    command: string,
    options?: { yield_time_ms?: number; max_output_tokens?: number },
  ): Promise<ToolResult>;
}

/** Persistent shells to lease and give back (the adapter contract's `lease()` / `release()`). */
export class SessionPool {
  readonly #specter: Specter;
  readonly #idle: Lease[] = [];
  /** Whether each lease's shell is back at its prompt (see `release`). */
  readonly #atPrompt = new WeakMap<Lease, boolean>();

  /** A pool over `specter`'s sessions (default: the default tools). */
  constructor(tools: Specter = specter) {
    this.#specter = tools;
  }

  /** An idle shell that still runs, else a new interactive `bash`. */
  async lease(): Promise<Lease> {
    for (let lease = this.#idle.pop(); lease !== undefined; lease = this.#idle.pop()) {
      const id = lease.sessionId;
      if (this.#specter.listSessions().some((s) => s.session_id === id && s.running)) return lease;
    }
    const shell = await this.#specter.exec(["bash"], { yield_time_ms: 10_000 });
    if (shell.session_id === undefined || !shell.running) {
      throw new SessionError("E_SESSION_CLOSED", `The shell ended at once: ${shell.output.slice(-500)}`);
    }
    const sessionId = String(shell.session_id);
    const lease: Lease = {
      sessionId,
      exec: async (command, options = {}) => {
        const result = await this.#specter.writeStdin({
          session_id: sessionId,
          chars: `${command}\r`,
          yield_time_ms: 30_000,
          ...options,
        });
        // Back at the prompt only when the command finished (its mark) or a prompt shows.
        this.#atPrompt.set(lease, result.returned_on === "command" || result.returned_on === "prompt");
        return result;
      },
    };
    this.#atPrompt.set(lease, true);
    return lease;
  }

  /**
   * Gives `lease` back; the next `lease()` may hand it out again. A shell whose last command has not
   * finished (it returned at the yield) is ended instead: the next lease would type into that command.
   */
  async release(lease: Lease): Promise<void> {
    if (this.#atPrompt.get(lease) === false) {
      this.#atPrompt.delete(lease);
      await this.#specter.closeSession({ session_id: lease.sessionId, force: true }).catch(() => null);
      return;
    }
    if (!this.#idle.includes(lease)) this.#idle.push(lease);
  }
}
