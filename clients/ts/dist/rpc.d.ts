import { SpecterError } from "./errors.js";
/** The longest a timer waits: 2^31 - 1 ms. A longer delay fires at once, so waits are cut to it. */
export declare const MAX_TIMER_MS: number;
/** A JSON-RPC notification from the server. */
export interface Notification {
    readonly method: string;
    readonly params: Record<string, unknown>;
}
/** How the agent process ended. */
export interface AgentExit {
    readonly code: number | null;
    readonly signal: string | null;
}
/** A running `specter agent` and the calls in flight to it. */
export declare class RpcConnection {
    #private;
    /** Settles once the process has ended. */
    readonly exited: Promise<AgentExit>;
    constructor(argv: readonly string[], options?: {
        env?: NodeJS.ProcessEnv;
        cwd?: string;
    });
    /** The agent's process id. */
    get pid(): number | undefined;
    /** Calls `method`; rejects with a `SpecterError` carrying the server's code. */
    request<T>(method: string, params: unknown): Promise<T>;
    /** Listens to notifications; `null` with an error once the connection failed. Returns the unlistener. */
    listen(listener: (message: Notification | null, error?: SpecterError) => void): () => void;
    /**
     * Ends the agent: closes its stdin (it ends every session and exits), and after `graceMs` kills it.
     * Resolves once it has exited.
     */
    close(graceMs?: number): Promise<AgentExit>;
}
