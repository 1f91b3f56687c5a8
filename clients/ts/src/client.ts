/**
 * `Client`: a `specter agent` process and its tools. Results carry the JSON field names (`exit_code`,
 * `session_id`, …), exactly as the server sends them (spec/agent.md).
 *
 * @module
 */
import { accessSync, constants, statSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { type AgentExit, type Notification, RpcConnection } from "./rpc.js";

/** Most notifications kept for subscriptions not registered yet (see `Client.#holdEarly`). */
const EARLY_LIMIT = 10_000;
import { SpecterError } from "./errors.js";
import { type ExpectMatch, type Frame, Subscription } from "./subscription.js";
import { shellWords } from "./words.js";
import type {
  CloseSessionParams,
  ExecCommandParams,
  ReadOutputParams,
  SessionListing,
  ToolResult,
  WriteStdinParams,
} from "./_protocol.js";

/** A view: `raw` frames, or the `compact` or `parsed` token views. */
export type TokenMode = "raw" | "compact" | "parsed";

/** How to start the agent. */
export interface ClientOptions {
  /**
   * The agent's command: an argv, or shell words. Default: the shell words in `$SPECTER_COMMAND` (e.g.
   * `deno run -A /opt/specter/main.ts agent`), else `specter agent` ({@link findSpecter}: `PATH`, then
   * where `./scripts/dev install` puts it). Policy flags go here (`["specter", "agent", "--policy",
   * "basic"]`): no tool argument can change the policy.
   */
  readonly command?: string | readonly string[];
  /** The agent's environment (default: this process's). */
  readonly env?: Record<string, string | undefined>;
  /** The agent's working directory (default: this process's). */
  readonly cwd?: string;
}

/** The argv `options` start the agent with. */
export function agentCommand(
  options: ClientOptions = {},
  env = process.env,
): string[] {
  if (options.command !== undefined) {
    return typeof options.command === "string" ? shellWords(options.command) : [...options.command];
  }
  const base = env.SPECTER_COMMAND;
  return base !== undefined && base.trim() !== "" ? shellWords(base) : [findSpecter(env), "agent"];
}

/**
 * The `specter` command: the first executable `specter` on `PATH`, else the one `./scripts/dev install`
 * puts in `$SPECTER_BIN_DIR`, `$XDG_BIN_HOME` or `~/.local/bin` (a directory often not on `PATH` yet), else
 * plain `specter` (starting it then fails with `E_AGENT_START`, which says how to install it).
 */
export function findSpecter(env: Record<string, string | undefined> = process.env): string {
  const home = env.HOME ?? homedir();
  const dirs = [
    ...(env.PATH ?? "").split(delimiter).filter((dir) => dir !== ""),
    ...[env.SPECTER_BIN_DIR, env.XDG_BIN_HOME, join(home, ".local", "bin")].filter(
      (dir): dir is string => dir !== undefined && dir !== "",
    ),
  ];
  for (const dir of dirs) {
    const path = join(dir, "specter");
    try {
      accessSync(path, constants.X_OK);
      if (statSync(path).isFile()) return path;
    } catch {
      // Not there, or not executable: the next directory.
    }
  }
  return "specter";
}

/** What `spawn` and `run` take besides the command. */
export interface StartOptions {
  readonly workdir?: string;
  readonly env?: Record<string, string>;
  /** False: no terminal (see `exec_command`'s `tty`). */
  readonly tty?: boolean;
}

/** A session started by `spawn`: send input, read its frames, wait for text. */
export class Session {
  readonly #client: Client;
  /** The session's id (as in `list_sessions`). */
  readonly id: string;
  #frames: Promise<Subscription> | null = null;

  /** @internal Made by `Client.spawn`. */
  constructor(client: Client, id: string) {
    this.#client = client;
    this.id = id;
  }

  /** The session's frames from the first (`mode`: raw by default), as one stream shared by `expect`. */
  frames(options: { mode?: TokenMode } = {}): Promise<Subscription> {
    // The promise is kept, so calls made at once share one subscription.
    this.#frames ??= this.#client.subscribe(this.id, {
      fromSeq: 0,
      tokenMode: options.mode ?? "raw",
    });
    return this.#frames;
  }

  /** Waits for `pattern` in the output (see `Subscription.expect`). */
  async expect(
    pattern: RegExp | string,
    options: { timeoutMs?: number } = {},
  ): Promise<ExpectMatch> {
    return await (await this.frames()).expect(pattern, options);
  }

  /** Types `text` and returns at once (the output comes through `frames` or `expect`). */
  async send(text: string): Promise<void> {
    await this.#client.writeStdin({
      session_id: this.id,
      chars: text,
      yield_time_ms: 250,
    });
  }

  /** Presses named keys (`enter`, `up`, `ctrl-c`, …), as the driver protocol names them. */
  async press(...keys: string[]): Promise<void> {
    await this.#client.writeStdin({
      session_id: this.id,
      keys,
      yield_time_ms: 250,
    });
  }

  /** Ends the session (SIGTERM, a grace, then SIGKILL) and stops its stream. */
  async close(options: { force?: boolean } = {}): Promise<ToolResult> {
    await (await this.#frames?.catch(() => null))?.close();
    return await this.#client.closeSession({ session_id: this.id, ...options });
  }
}

/** A leased shell session: `exec` runs a command line and returns when the shell marks it finished. */
export interface Lease {
  readonly session: Session;
  /** Runs `command` in the leased shell; the result carries `command.exit_code`. */
  exec(
    command: string,
    options?: { yield_time_ms?: number; max_output_tokens?: number },
  ): Promise<ToolResult>;
}

/** A `specter agent` process and its tools. */
export class Client {
  readonly #rpc: RpcConnection;
  readonly #streams = new Map<string, Subscription>();
  readonly #idle: Lease[] = [];
  #closed: Promise<AgentExit> | null = null;
  readonly #early = new Map<string, Notification[]>();
  /** Subscriptions closed by this client. */
  readonly #gone = new Set<string>();
  #earlyCount = 0;
  /** Whether each lease's shell is back at its prompt (see `release`). */
  readonly #atPrompt = new WeakMap<Lease, boolean>();

  constructor(options: ClientOptions = {}) {
    this.#rpc = new RpcConnection(agentCommand(options), {
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
    this.#rpc.listen((message, error) => {
      if (message === null) {
        for (const stream of this.#streams.values()) stream.end(error);
        this.#streams.clear();
        return;
      }
      const id = message.params.subscription;
      if (typeof id !== "string") return;
      const stream = this.#streams.get(id);
      if (stream === undefined) {
        if (!this.#gone.has(id)) this.#holdEarly(id, message);
        return;
      }
      this.#deliver(stream, id, message);
    });
  }

  /**
   * Keeps a notification for a subscription not registered yet: the lines of one read are handled at once,
   * so frames that arrived with the answer to `session.subscribe` come before the caller has its stream.
   * Bounded: the oldest are dropped past {@link EARLY_LIMIT} (frames of a closed stream end up here too).
   */
  #holdEarly(id: string, message: Notification): void {
    const held = this.#early.get(id) ?? [];
    held.push(message);
    this.#early.set(id, held);
    if (++this.#earlyCount > EARLY_LIMIT) {
      const [oldest] = this.#early.keys();
      this.#earlyCount -= this.#early.get(oldest!)!.length;
      this.#early.delete(oldest!);
    }
  }

  #deliver(stream: Subscription, id: string, message: Notification): void {
    if (message.method === "session.frame") {
      stream.push(message.params.frame as Frame);
    } else if (message.method === "session.end") {
      stream.end();
      this.#streams.delete(id as string);
    } else if (message.method === "session.error") {
      const failure = message.params.error as {
        message?: string;
        data?: { code?: string };
      } | undefined;
      stream.end(
        new SpecterError(
          failure?.data?.code ?? "E_RPC",
          failure?.message ?? "The stream broke",
        ),
      );
      this.#streams.delete(id as string);
    }
  }

  /** The agent's process id. */
  get pid(): number | undefined {
    return this.#rpc.pid;
  }

  /** How the agent process ended, once it has. */
  get exited(): Promise<AgentExit> {
    return this.#rpc.exited;
  }

  /** `exec_command`: runs `cmd` (a shell line or an argv) and returns at exit, a prompt or the yield. */
  execCommand(params: ExecCommandParams): Promise<ToolResult> {
    return this.#rpc.request("exec_command", params);
  }

  /** `write_stdin`: types `chars` / `keys`; with neither, waits for something to happen. */
  writeStdin(params: WriteStdinParams): Promise<ToolResult> {
    return this.#rpc.request("write_stdin", params);
  }

  /** `read_output`: any range of a session's output, in any view. */
  readOutput(params: ReadOutputParams): Promise<ToolResult> {
    return this.#rpc.request("read_output", params);
  }

  /** `close_session`: ends a session. */
  closeSession(params: CloseSessionParams): Promise<ToolResult> {
    return this.#rpc.request("close_session", params);
  }

  /** `list_sessions`: the sessions the agent holds. */
  async listSessions(): Promise<SessionListing[]> {
    return (await this.#rpc.request<{ sessions: SessionListing[] }>(
      "list_sessions",
      {},
    )).sessions;
  }

  /** Streams a session's frames from `fromSeq` (default 0) in a view (default raw). */
  async subscribe(
    sessionId: string,
    options: { fromSeq?: number; tokenMode?: TokenMode } = {},
  ): Promise<Subscription> {
    const { subscription } = await this.#rpc.request<{ subscription: string }>(
      "session.subscribe",
      {
        session_id: sessionId,
        from_seq: options.fromSeq ?? 0,
        token_mode: options.tokenMode ?? "raw",
      },
    );
    const stream = new Subscription(subscription, async () => {
      this.#streams.delete(subscription);
      this.#gone.add(subscription); // Frames still on their way are dropped, not held.
      await this.#rpc.request("session.unsubscribe", { subscription }).catch(
        () => {
          // The agent is gone or the stream already ended: nothing left to stop.
        },
      );
    });
    this.#streams.set(subscription, stream);
    const early = this.#early.get(subscription) ?? [];
    this.#early.delete(subscription);
    this.#earlyCount -= early.length;
    for (const message of early) this.#deliver(stream, subscription, message);
    return stream;
  }

  /** Starts `cmd` and returns its `Session` at once (`session.start`). */
  async spawn(
    cmd: string | readonly string[],
    options: StartOptions = {},
  ): Promise<Session> {
    const { session_id } = await this.#rpc.request<{ session_id: string }>(
      "session.start",
      {
        cmd: typeof cmd === "string" ? cmd : [...cmd],
        ...options,
      },
    );
    return new Session(this, session_id);
  }

  /** Runs `cmd` and yields its frames (in `mode`, raw by default) until it ends: the adapter contract's `run`. */
  async *run(
    cmd: string | readonly string[],
    options: StartOptions & { mode?: TokenMode } = {},
  ): AsyncGenerator<Frame> {
    const { mode, ...start } = options;
    const session = await this.spawn(cmd, start);
    const frames = await session.frames({ mode: mode ?? "raw" });
    try {
      yield* frames;
    } finally {
      // Left before the end (a break, a throw): the program is ended too.
      if (!frames.ended) await session.close().catch(() => null);
      await frames.close();
    }
  }

  /** A persistent shell from the pool (an idle one when there is one, else a new `bash`). */
  async lease(): Promise<Lease> {
    for (
      let lease = this.#idle.pop();
      lease !== undefined;
      lease = this.#idle.pop()
    ) {
      const listing = (await this.listSessions()).find((s) => s.session_id === lease!.session.id);
      if (listing?.running === true) return lease;
    }
    const shell = await this.execCommand({
      cmd: ["bash"],
      yield_time_ms: 10_000,
    });
    if (shell.session_id === undefined || !shell.running) {
      throw new SpecterError(
        "E_SESSION_CLOSED",
        `The leased shell ended at once: ${shell.output.slice(-500)}`,
      );
    }
    const session = new Session(this, shell.session_id);
    const lease = {
      session,
      exec: async (command: string, options = {}) => {
        const result = await this.writeStdin({
          session_id: session.id,
          chars: `${command}\r`,
          yield_time_ms: 30_000,
          ...options,
        });
        // Back at the shell's prompt only when the command finished (its mark) or a prompt shows.
        this.#atPrompt.set(
          lease,
          result.returned_on === "command" || result.returned_on === "prompt",
        );
        return result;
      },
    };
    this.#atPrompt.set(lease, true);
    return lease;
  }

  /**
   * Gives a leased shell back to the pool. A shell whose last command has not finished (it returned at the
   * yield) is ended instead: the next lease would type into that command.
   */
  async release(lease: Lease): Promise<void> {
    if (this.#atPrompt.get(lease) === false) {
      this.#atPrompt.delete(lease);
      await lease.session.close({ force: true }).catch(() => null);
      return;
    }
    if (!this.#idle.includes(lease)) this.#idle.push(lease);
  }

  /**
   * Ends the agent and every session it holds (the agent ends them when its stdin closes; after `graceMs`
   * it is killed). Calls after this fail with `E_CLIENT_CLOSED`.
   */
  close(graceMs?: number): Promise<AgentExit> {
    this.#closed ??= this.#rpc.close(graceMs);
    return this.#closed;
  }
}
