import { type AgentExit } from "./rpc.js";
import { type ExpectMatch, type Frame, Subscription } from "./subscription.js";
import type { CloseSessionParams, ExecCommandParams, ReadOutputParams, SessionListing, ToolResult, WriteStdinParams } from "./_protocol.js";
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
export declare function agentCommand(options?: ClientOptions, env?: NodeJS.ProcessEnv): string[];
/**
 * The `specter` command: the first executable `specter` on `PATH`, else the one `./scripts/dev install`
 * puts in `$SPECTER_BIN_DIR`, `$XDG_BIN_HOME` or `~/.local/bin` (a directory often not on `PATH` yet), else
 * plain `specter` (starting it then fails with `E_AGENT_START`, which says how to install it).
 */
export declare function findSpecter(env?: Record<string, string | undefined>): string;
/** What `spawn` and `run` take besides the command. */
export interface StartOptions {
    readonly workdir?: string;
    readonly env?: Record<string, string>;
    /** False: no terminal (see `exec_command`'s `tty`). */
    readonly tty?: boolean;
}
/** A session started by `spawn`: send input, read its frames, wait for text. */
export declare class Session {
    #private;
    /** The session's id (as in `list_sessions`). */
    readonly id: string;
    /** @internal Made by `Client.spawn`. */
    constructor(client: Client, id: string);
    /** The session's frames from the first (`mode`: raw by default), as one stream shared by `expect`. */
    frames(options?: {
        mode?: TokenMode;
    }): Promise<Subscription>;
    /** Waits for `pattern` in the output (see `Subscription.expect`). */
    expect(pattern: RegExp | string, options?: {
        timeoutMs?: number;
    }): Promise<ExpectMatch>;
    /** Types `text` and returns at once (the output comes through `frames` or `expect`). */
    send(text: string): Promise<void>;
    /** Presses named keys (`enter`, `up`, `ctrl-c`, …), as the driver protocol names them. */
    press(...keys: string[]): Promise<void>;
    /** Ends the session (SIGTERM, a grace, then SIGKILL) and stops its stream. */
    close(options?: {
        force?: boolean;
    }): Promise<ToolResult>;
}
/** A leased shell session: `exec` runs a command line and returns when the shell marks it finished. */
export interface Lease {
    readonly session: Session;
    /** Runs `command` in the leased shell; the result carries `command.exit_code`. */
    exec(command: string, options?: {
        yield_time_ms?: number;
        max_output_tokens?: number;
    }): Promise<ToolResult>;
}
/** A `specter agent` process and its tools. */
export declare class Client {
    #private;
    constructor(options?: ClientOptions);
    /** The agent's process id. */
    get pid(): number | undefined;
    /** How the agent process ended, once it has. */
    get exited(): Promise<AgentExit>;
    /** `exec_command`: runs `cmd` (a shell line or an argv) and returns at exit, a prompt or the yield. */
    execCommand(params: ExecCommandParams): Promise<ToolResult>;
    /** `write_stdin`: types `chars` / `keys`; with neither, waits for something to happen. */
    writeStdin(params: WriteStdinParams): Promise<ToolResult>;
    /** `read_output`: any range of a session's output, in any view. */
    readOutput(params: ReadOutputParams): Promise<ToolResult>;
    /** `close_session`: ends a session. */
    closeSession(params: CloseSessionParams): Promise<ToolResult>;
    /** `list_sessions`: the sessions the agent holds. */
    listSessions(): Promise<SessionListing[]>;
    /** Streams a session's frames from `fromSeq` (default 0) in a view (default raw). */
    subscribe(sessionId: string, options?: {
        fromSeq?: number;
        tokenMode?: TokenMode;
    }): Promise<Subscription>;
    /** Starts `cmd` and returns its `Session` at once (`session.start`). */
    spawn(cmd: string | readonly string[], options?: StartOptions): Promise<Session>;
    /** Runs `cmd` and yields its frames (in `mode`, raw by default) until it ends: the adapter contract's `run`. */
    run(cmd: string | readonly string[], options?: StartOptions & {
        mode?: TokenMode;
    }): AsyncGenerator<Frame>;
    /** A persistent shell from the pool (an idle one when there is one, else a new `bash`). */
    lease(): Promise<Lease>;
    /**
     * Gives a leased shell back to the pool. A shell whose last command has not finished (it returned at the
     * yield) is ended instead: the next lease would type into that command.
     */
    release(lease: Lease): Promise<void>;
    /**
     * Ends the agent and every session it holds (the agent ends them when its stdin closes; after `graceMs`
     * it is killed). Calls after this fail with `E_CLIENT_CLOSED`.
     */
    close(graceMs?: number): Promise<AgentExit>;
}
