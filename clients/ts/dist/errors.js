/**
 * The one error class of the client: a stable `code` (Specter's `E_…` codes from the server, or the
 * client's own below), a message, and what the server said (`data`).
 *
 * The client's own codes: `E_AGENT_START` (the agent could not be started), `E_AGENT_EXITED` (it ended
 * while a call or a stream was open), `E_CLIENT_CLOSED` (a call after `close()`), `E_EXPECT_TIMEOUT` (`expect`
 * did not match in time), `E_SESSION_CLOSED` (the stream ended before `expect` matched), `E_RPC` (a JSON-RPC
 * error without a Specter code, e.g. -32602 invalid params).
 *
 * @module
 */
/** A failure of a call, a stream or the agent process. */
export class SpecterError extends Error {
    /** Stable code: `E_SESSION_UNKNOWN`, `E_AGENT_EXITED`, … */
    code;
    /** The JSON-RPC error code, when the server answered with an error. */
    rpcCode;
    /** The server's `error.data`, when it answered with an error. */
    data;
    constructor(code, message, options = {}) {
        super(message, options.cause === undefined ? undefined : { cause: options.cause });
        this.name = "SpecterError";
        this.code = code;
        this.rpcCode = options.rpcCode;
        this.data = options.data;
    }
}
