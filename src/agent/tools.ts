/**
 * The agent tools: `exec_command`, `write_stdin`, `read_output`, `close_session`, `list_sessions` over a
 * store of {@link AgentSession}s. Every session runs under the options (policy, sandbox, limits) the host
 * chose when it made the tools; a tool argument can add environment variables and pick a working
 * directory, never change the policy.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { within } from "../clock.ts";
import { SessionError, SpecterError, UsageError } from "../errors.ts";
import {
  type CloseSessionParams,
  DEFAULT_MAX_OUTPUT_TOKENS,
  type ExecCommandParams,
  type Frame,
  type ReadOutputParams,
  type SessionListing,
  type StartParams,
  type StartResult,
  type TokenMode,
  type ToolResult,
  WAIT_LIMITS,
  type WriteStdinParams,
  YIELD_LIMITS,
} from "../protocol/mod.ts";
import { PAGER_PROMPT } from "../views/mod.ts";
import {
  DEFAULTS,
  defaultSandbox,
  encodeKey,
  type Session,
  spawn,
  type SpawnOptions,
} from "../session/mod.ts";
import { hostHome, type Policy } from "../policy/mod.ts";
import { policyHint } from "./policy_hint.ts";
import { resolveWorkdir } from "./workdir.ts";
import { AgentSession, type ReturnedOn } from "./agent_session.ts";
import type { OutputLog, OutputLogFactory } from "./output_log.ts";
import { pageResult, takenResult } from "./page_result.ts";
import { checkExecRequest } from "./exec_checks.ts";
import { victimFor } from "./pruning.ts";
import { OutputCut } from "./truncate.ts";

/** Environment that tames pagers and colour in agent sessions (TERM stays xterm-256color). */
export const AGENT_ENV: Readonly<Record<string, string>> = {
  PAGER: "cat",
  GIT_PAGER: "cat",
  MANPAGER: "cat",
  SYSTEMD_PAGER: "",
  NO_COLOR: "1",
};

/** Prompts of shells and REPLs an agent session returns at (tried after 150 ms of quiet). */
export const AGENT_PROMPTS: readonly RegExp[] = [
  /(?:^|\s)[\w.@~:/\-\[\]]*[$#%] $/, // sh, bash, zsh: "user@host:~$ ", "# "
  /^[\w.-]+(?:\([\w-]+\))?[#>]$/, // network devices: "edge-rtr-01#", "sw1(config)#", "router>"
  /^(?:>>>|\.\.\.) $/, // python
  /^In \[\d+\]: $/, // ipython
  /^(?:irb|pry)\(.*\)[>*] $/, // ruby
  /^(?:> |>> |mysql> |postgres=# |sqlite> |\(gdb\) |\(lldb\) |\(Pdb\) )$/, // node, repls, debuggers
  /(?:password|passphrase)[^:]*: ?$/i, // a password prompt waits for input too
  /\[[yY]\/[nN]\] ?$|\([yY]\/[nN]\) ?$/, // confirmations
  PAGER_PROMPT,
];

/** How long `close` waits for the sessions' exits. */
const CLOSE_WAIT_MS = 10_000;

/** Quiet after new output that ends an empty `write_stdin` (a wait): long enough for a build's pauses. */
export const WAIT_QUIET_MS = 3000;

/** The audit of one agent session (the CLI writes an audit log per session, as `run` and `exec` do). */
export interface SessionAudit {
  /** The session's run id and artifacts directory (named in its `start` frame). */
  readonly id: string;
  readonly artifacts: string;
  /** The session started. */
  launched(session: Session): void;
  /** Every frame of the session (breaches, signals and the exit are recorded). */
  frame(frame: Frame): void;
  /** The session could not start. */
  failed(error: unknown): void;
  /** The session is over: close the log. */
  close(): void;
  /** A network allow list's bridge to the session's own proxy (started with its audit; see `SpawnOptions.netRelay`). */
  readonly netRelay?: SpawnOptions["netRelay"];
}

/**
 * How a host watches a call it may cancel (the MCP server: progress notifications while it runs, and
 * `notifications/cancelled`).
 */
export interface CallWatch {
  /** Once aborted, the program gets ctrl-c (when it still runs) and the call's wait ends at once. */
  readonly signal?: AbortSignal;
  /** The call's session, once known (`exec_command` starts it). */
  session?(agent: AgentSession): void;
}

/** How the tools run sessions. */
export interface ToolOptions {
  /** Opens the audit of a session about to start (none: sessions are not audited). */
  readonly audit?: (argv: readonly string[], cwd: string) => SessionAudit;
  /** The spawn options every session starts from (policy, sandbox, limits); `argv` is replaced. */
  readonly base: Omit<SpawnOptions, "argv">;
  /** Most sessions held (default 64). */
  readonly maxSessions?: number;
  /** A session nobody called and that printed nothing for this long is ended (ms; default 30 min). */
  readonly idleTimeoutMs?: number;
  /** Environment added to every session (default {@link AGENT_ENV}). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Starts a session and names it (default: {@link spawn} in this process, ids 1, 2, …). The daemon starts
   * agents' sessions as its own named sessions, so that they outlive the agent.
   */
  readonly spawn?: (options: SpawnOptions) => { readonly session: Session; readonly id: string };
  /**
   * Opens each session's output log, which keeps every frame for `read_output` (`specter agent` keeps
   * them on disk, within budgets). None: `read_output` reads the session's memory window.
   */
  readonly outputLog?: OutputLogFactory;
}

function clamp(value: number | undefined, limits: { min: number; max: number; default: number }): number {
  if (value === undefined || !Number.isFinite(value)) return limits.default;
  return Math.min(limits.max, Math.max(limits.min, value));
}

/** The sessions of one agent (one `specter agent` process, or one library user). */
export class AgentTools {
  readonly #options: ToolOptions;
  readonly #sessions = new Map<string, AgentSession>();
  readonly #max: number;
  readonly #sweep: ReturnType<typeof setInterval>;
  #next = 1;

  constructor(options: ToolOptions) {
    this.#options = options;
    this.#max = options.maxSessions ?? 64;
    const idle = options.idleTimeoutMs ?? 30 * 60_000;
    this.#sweep = setInterval(() => this.sweep(idle), Math.min(idle, 60_000));
    Deno.unrefTimer(this.#sweep);
  }

  /** The session `id` (throws `E_SESSION_UNKNOWN`). */
  get(id: string | number): AgentSession {
    id = String(id);
    const session = this.#sessions.get(id);
    if (session === undefined) {
      throw new SessionError("E_SESSION_UNKNOWN", `No session "${id.slice(0, 80)}" (see list_sessions)`);
    }
    return session;
  }

  async execCommand(params: ExecCommandParams, watch?: CallWatch): Promise<ToolResult> {
    const { agent, shell, pruned } = this.#start(params);
    this.#watch(agent, watch);
    return await this.#owed(agent, async () => {
      const started = performance.now();
      const returnedOn = await agent.wait({
        yieldMs: clamp(params.yield_time_ms, YIELD_LIMITS),
        prompt: true,
        silentInput: true,
        ...(watch?.signal === undefined ? {} : { signal: watch.signal }),
      });
      return await this.#result(agent, params, returnedOn, started, {
        ...(shell === undefined ? {} : { shell }),
        ...(pruned === undefined ? {} : { pruned }),
      });
    });
  }

  /** Runs a call on `agent`, which is never pruned while its result is owed. */
  async #owed<T>(agent: AgentSession, call: () => Promise<T>): Promise<T> {
    agent.busy++;
    agent.lastUsed = performance.now();
    try {
      return await call();
    } finally {
      agent.busy--;
      agent.lastUsed = performance.now();
    }
  }

  /**
   * Starts a session and returns at once (`session.start`, for programs that then subscribe to its frames
   * from the first): its id, the shell of a string command, and the session pruned to make room.
   */
  start(params: StartParams): StartResult {
    const { agent, shell, pruned } = this.#start(params);
    return {
      session_id: agent.id,
      ...(shell === undefined ? {} : { shell }),
      ...(pruned === undefined ? {} : { pruned }),
    };
  }

  #start(
    params: StartParams,
  ): { agent: AgentSession; shell: string | undefined; pruned: string | undefined } {
    checkExecRequest(params);
    // Room first: a session that cannot be held is refused before it starts.
    const victim = victimFor(this.#sessions.values(), this.#max);
    if (typeof params.cmd !== "string" && (params.shell !== undefined || params.login !== undefined)) {
      throw new UsageError('exec_command "shell" and "login" apply to a string cmd, not to an argv array');
    }
    const shell = typeof params.cmd === "string" ? params.shell ?? this.#shell() : undefined;
    // A workdir is honoured or refused (E_SPAWN_CWD), never replaced by another directory.
    const cwd = resolveWorkdir(params.workdir, this.#options.base.cwd ?? Deno.cwd(), this.#policy());
    const argv = typeof params.cmd === "string"
      ? [shell!, ...(params.login === true ? ["-l"] : []), "-c", params.cmd]
      : params.cmd;
    const audit = this.#options.audit?.(argv, cwd);
    let session: Session;
    let named: string | undefined;
    try {
      const options: SpawnOptions = {
        ...this.#options.base,
        argv,
        cwd,
        env: {
          // The taming first: the host's own --env (e.g. PAGER=less) wins over it, the call's over both.
          ...(this.#options.env ?? AGENT_ENV),
          ...this.#options.base.env,
          ...params.env,
        },
        promptRegex: [...(this.#options.base.promptRegex ?? []), ...AGENT_PROMPTS],
        promptSettleMs: 150,
        // An interactive bash or zsh gets OSC 133 marks (with a nonce: marks that only appear in output
        // cannot end a command), so a command returns when it finishes, with its exit code.
        shellIntegration: true,
        ...(params.tty === false ? { tty: false } : {}),
        ...(audit === undefined ? {} : { id: audit.id, artifacts: audit.artifacts }),
        ...(audit?.netRelay === undefined ? {} : { netRelay: audit.netRelay }),
      };
      if (this.#options.spawn === undefined) session = spawn(options);
      else ({ session, id: named } = this.#options.spawn(options));
    } catch (error: unknown) {
      audit?.failed(error);
      audit?.close();
      throw error;
    }
    audit?.launched(session);
    // Room is made only for a session that started: a call that fails ends nobody's session.
    const pruned = this.#prune(victim);
    const id = named ?? String(this.#next++);
    const agent = new AgentSession(
      id,
      session,
      cwd,
      shell,
      audit,
      undefined,
      this.#openLog(id, audit?.artifacts),
    );
    this.#sessions.set(id, agent);
    return { agent, shell, pruned };
  }

  /**
   * Takes in a session these tools did not start (one a restarted daemon took back for them), under `id`:
   * it reads the session's frames from now on as a subscriber, so whoever owns the session keeps its
   * main reader.
   */
  adopt(id: string, session: Session, cwd: string): void {
    if (this.#sessions.has(id)) return;
    const reader = session.subscribe({ authoritative: true });
    this.#sessions.set(
      id,
      new AgentSession(id, session, cwd, undefined, undefined, reader, this.#openLog(id)),
    );
  }

  /** The output log of session `id`; none when the host keeps none or it cannot be opened. */
  #openLog(id: string, artifacts?: string): OutputLog | null {
    try {
      return this.#options.outputLog?.(id, artifacts) ?? null;
    } catch (error: unknown) {
      // The session runs on with its memory window: read_output says what it no longer holds.
      console.error(`specter: agent session ${id}: no output log: ${String(error)}`);
      return null;
    }
  }

  async writeStdin(params: WriteStdinParams, watch?: CallWatch): Promise<ToolResult> {
    const agent = this.get(params.session_id);
    this.#watch(agent, watch);
    return await this.#owed(agent, () => this.#writeStdin(agent, params, watch));
  }

  async #writeStdin(agent: AgentSession, params: WriteStdinParams, watch?: CallWatch): Promise<ToolResult> {
    const signal = watch?.signal === undefined ? {} : { signal: watch.signal };
    agent.lastActivity = new Date();
    const started = performance.now();
    const chars = params.chars ?? "";
    const keys = params.keys ?? [];
    const typing = chars !== "" || keys.length > 0 || params.close_stdin === true;
    if (typing) {
      // Every key is known before anything is typed: a bad name types nothing (E_USAGE, as other arguments).
      for (const key of keys) {
        try {
          encodeKey(key);
        } catch (error: unknown) {
          if (!(error instanceof SpecterError)) throw error;
          throw new UsageError(`write_stdin "keys": ${error.message}`, { cause: error });
        }
      }
      if (agent.exit !== null) {
        throw new SessionError("E_SESSION_CLOSED", `Session "${agent.id}" has exited: nothing can be typed`);
      }
      if (chars !== "") agent.session.write(chars);
      for (const key of keys) agent.session.press(key);
      // After what was typed: the program reads it all, then end of input.
      if (params.close_stdin === true) agent.session.closeInput();
    }
    const returnedOn = typing
      ? await agent.wait({ yieldMs: clamp(params.yield_time_ms, YIELD_LIMITS), prompt: true, ...signal })
      : await agent.wait({
        yieldMs: clamp(params.yield_time_ms, WAIT_LIMITS),
        prompt: true,
        quietMs: WAIT_QUIET_MS,
        ...signal,
      });
    return await this.#result(agent, params, returnedOn, started, {});
  }

  /**
   * One page of a session's output from `from_seq` (see `paging.ts`): whole lines within
   * `max_output_tokens`, `next_from_seq` and `more` to go on, `dropped` for frames a budget dropped.
   */
  async readOutput(params: ReadOutputParams): Promise<ToolResult> {
    const agent = this.get(params.session_id);
    return await this.#owed(agent, async () => {
      const mode = params.token_mode ?? "compact";
      const maxTokens = params.max_output_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
      const page = await agent.readPage(params.from_seq, params.to_seq, mode, maxTokens, params.from_offset);
      // A read returns at once: "exit" once the program has ended, else "yield" (it runs on).
      return pageResult(agent, page, mode, agent.exit === null ? "yield" : "exit");
    });
  }

  async closeSession(params: CloseSessionParams): Promise<ToolResult> {
    const agent = this.get(params.session_id);
    return await this.#owed(agent, async () => {
      const started = performance.now();
      await agent.session.terminate(params.force === true ? 0 : undefined);
      const result = await this.#result(agent, {}, "exit", started, {});
      this.#remove(agent);
      return result;
    });
  }

  listSessions(): { sessions: SessionListing[] } {
    return {
      sessions: [...this.#sessions.values()].map((agent) => ({
        session_id: agent.id,
        argv: [...agent.argv],
        cwd: agent.cwd,
        running: agent.exit === null,
        exit_code: agent.exit?.code ?? null,
        timed_out: agent.timedOut || agent.exit?.timed_out === true,
        started: agent.started.toISOString(),
        last_activity: agent.lastActivity.toISOString(),
        output_tokens: agent.outputTokens,
      })),
    };
  }

  /** Ends every session that was idle (no call, no output) for `idleMs`. */
  sweep(idleMs: number): string[] {
    const ended: string[] = [];
    const now = Date.now();
    for (const agent of this.#sessions.values()) {
      if (agent.exit === null && now - agent.lastActivity.getTime() >= idleMs) {
        agent.timedOut = true;
        void agent.session.terminate();
        ended.push(agent.id);
      }
    }
    return ended;
  }

  /** Ends the calls that only wait (empty `write_stdin`) at once: the client that made them is gone. */
  cancelWaits(): void {
    for (const agent of this.#sessions.values()) agent.cancelWaits();
  }

  /** Ends every session and stops the sweep. */
  async close(): Promise<void> {
    clearInterval(this.#sweep);
    // A timer of our own while the exits come: the child watcher's safety tick is unref'd, and a SIGCHLD
    // that raced its listener is only seen by that tick (the process must not end before it fires).
    await within(
      Promise.all([...this.#sessions.values()].map((agent) => agent.session.terminate(0))),
      CLOSE_WAIT_MS,
    );
    for (const agent of [...this.#sessions.values()]) this.#remove(agent);
  }

  /** Tells `watch` the call's session, and presses ctrl-c on it when the call is cancelled. */
  #watch(agent: AgentSession, watch: CallWatch | undefined): void {
    watch?.session?.(agent);
    const signal = watch?.signal;
    if (signal === undefined) return;
    const interrupt = () => {
      if (agent.exit === null) agent.session.press("ctrl-c");
    };
    if (signal.aborted) interrupt();
    else signal.addEventListener("abort", interrupt, { once: true });
  }

  /** The policy sessions run under (the default sandbox's when none is given), null without a sandbox. */
  #policy(): Policy | null {
    const sandbox = this.#options.base.sandbox ?? defaultSandbox(this.#options.base.cwd ?? Deno.cwd());
    return "policy" in sandbox ? sandbox.policy : null;
  }

  /** The policy hint of a failed command's output (see `policy_hint.ts`), if the policy caused it. */
  #hint(agent: AgentSession, text: string, failed: boolean): string | undefined {
    const policy = this.#policy();
    if (!failed || policy === null) return undefined;
    return policyHint(text, { policy, cwd: agent.cwd, home: hostHome(), sandboxPath: DEFAULTS.path });
  }

  /** The shell for string commands: bash when there is one, else sh. */
  #shell(): string {
    return existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh";
  }

  /** Ends `victim` (chosen by {@link victimFor}) and forgets it; its id, for the result's `pruned`. */
  #prune(victim: AgentSession | null): string | undefined {
    if (victim === null) return undefined;
    void victim.session.terminate(0);
    this.#remove(victim);
    return victim.id;
  }

  #remove(agent: AgentSession): void {
    agent.close();
    this.#sessions.delete(agent.id);
  }

  async #result(
    agent: AgentSession,
    params: { token_mode?: TokenMode; max_output_tokens?: number },
    returnedOn: ReturnedOn,
    started: number,
    extra: Partial<ToolResult>,
  ): Promise<ToolResult> {
    const mode = params.token_mode ?? "compact";
    if (returnedOn === "exit") await agent.session.exited;
    const cutter = new OutputCut(params.max_output_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS);
    const taken = await agent.take(mode, cutter);
    const cut = cutter.end(agent.readHint(taken.fromSeq, taken.toSeq));
    agent.lastActivity = new Date();
    const command = returnedOn === "command" ? agent.lastCommand : null;
    const code = command?.exit_code ?? agent.exit?.code;
    const hint = this.#hint(agent, cut.output, code !== undefined && code !== null && code !== 0);
    return {
      ...takenResult(agent, taken, cut, mode, returnedOn, started),
      ...(command === null ? {} : {
        command: {
          ...(command.command === undefined ? {} : { command: command.command }),
          exit_code: command.exit_code,
          duration_ms: command.duration_ms,
          reported_by: command.reported_by,
        },
      }),
      ...(hint === undefined ? {} : { policy_hint: hint }),
      ...extra,
    };
  }
}
