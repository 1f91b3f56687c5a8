/**
 * A stream of one session's frames (`session.subscribe`): iterate it with `for await`, or wait for text
 * with `expect`. Frames are queued as they arrive; the stream ends after the session's last frame
 * (`session.end`), on `close()`, or with the agent (then iterating throws `E_AGENT_EXITED`).
 *
 * @module
 */
import { SpecterError } from "./errors.js";
import type { RawFrame, ViewEvent } from "./_protocol.js";
/** A frame as a subscription delivers it: a raw frame, or a view event with the `seq` it covers. */
export type Frame = RawFrame | (ViewEvent & {
    seq?: number;
});
/** What `expect` found. */
export interface ExpectMatch {
    /** The match (groups included). */
    readonly match: RegExpExecArray;
    /** The frame whose text completed the match. */
    readonly frame: Frame;
    /** The text searched, up to the end of the match. */
    readonly before: string;
}
/** The text a frame adds to what the program showed (none for frames that are not output). */
export declare function frameText(frame: Frame): string;
/** One subscription's frames. */
export declare class Subscription implements AsyncIterable<Frame> {
    #private;
    /** The server's subscription id. */
    readonly id: string;
    /** @internal Made by `Client.subscribe`. */
    constructor(id: string, unsubscribe: () => Promise<void>);
    /** @internal A frame arrived. */
    push(frame: Frame): void;
    /** @internal The stream is over (`error`: because the agent failed). */
    end(error?: SpecterError): void;
    /** True once no more frames will come (the queued ones can still be read). */
    get ended(): boolean;
    /** The next frame, or null once the stream is over (throws the agent's failure). */
    next(): Promise<Frame | null>;
    [Symbol.asyncIterator](): AsyncIterator<Frame>;
    /**
     * Waits until the output since the last match matches `pattern` (a string is matched literally);
     * throws `E_EXPECT_TIMEOUT` after `timeoutMs` (default 10 000) and `E_SESSION_CLOSED` when the session ends first.
     * The frames it reads are consumed.
     */
    expect(pattern: RegExp | string, options?: {
        timeoutMs?: number;
    }): Promise<ExpectMatch>;
    /** Stops the stream (`session.unsubscribe`); frames already queued can still be read. */
    close(): Promise<void>;
}
