/**
 * A stream of one session's frames (`session.subscribe`): iterate it with `for await`, or wait for text
 * with `expect`. Frames are queued as they arrive; the stream ends after the session's last frame
 * (`session.end`), on `close()`, or with the agent (then iterating throws `E_AGENT_EXITED`).
 *
 * @module
 */
import { SpecterError } from "./errors.js";
import { MAX_TIMER_MS } from "./rpc.js";
const TIMED_OUT = Symbol("timed out");
/** Most text `expect` keeps to search (the newest); older text has been searched already. */
const EXPECT_WINDOW = 1 << 20;
/** The text a frame adds to what the program showed (none for frames that are not output). */
export function frameText(frame) {
    switch (frame.type) {
        case "stdout":
            return "binary" in frame && frame.binary === true ? decodeBase64(frame.data) : frame.data;
        case "text":
        case "line_update":
            return frame.data;
        case "screen":
            return frame.rows.join("\n") + "\n";
        case "rows":
            return frame.rows.map((row) => row.text).join("\n") + "\n";
        default:
            return "";
    }
}
function decodeBase64(data) {
    const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
    return new TextDecoder().decode(bytes);
}
/** One subscription's frames. */
export class Subscription {
    /** The server's subscription id. */
    id;
    #queue = [];
    #waiters = [];
    #ended = false;
    #error = null;
    #text = "";
    /** The frame whose text was last added to what `expect` searches. */
    #lastFrame = null;
    #unsubscribe;
    /** @internal Made by `Client.subscribe`. */
    constructor(id, unsubscribe) {
        this.id = id;
        this.#unsubscribe = unsubscribe;
    }
    /** @internal A frame arrived. */
    push(frame) {
        this.#queue.push(frame);
        this.#wake();
    }
    /** @internal The stream is over (`error`: because the agent failed). */
    end(error) {
        if (this.#ended)
            return;
        this.#ended = true;
        this.#error = error ?? null;
        this.#wake();
    }
    /** True once no more frames will come (the queued ones can still be read). */
    get ended() {
        return this.#ended;
    }
    /** The next frame, or null once the stream is over (throws the agent's failure). */
    async next() {
        const frame = await this.#nextBefore(Infinity);
        return frame === TIMED_OUT ? null : frame;
    }
    /** The next frame, null at the end, or TIMED_OUT at `deadline` (ms since the epoch); no frame is lost. */
    async #nextBefore(deadline) {
        for (;;) {
            const frame = this.#queue.shift();
            if (frame !== undefined)
                return frame;
            if (this.#ended) {
                if (this.#error !== null)
                    throw this.#error;
                return null;
            }
            const left = deadline - Date.now();
            if (left <= 0)
                return TIMED_OUT;
            let timer;
            await new Promise((resolve) => {
                this.#waiters.push(resolve);
                // A longer wait than a timer can make re-arms (a longer delay would fire at once, and spin).
                if (Number.isFinite(left))
                    timer = setTimeout(resolve, Math.min(left, MAX_TIMER_MS));
            });
            clearTimeout(timer);
        }
    }
    async *[Symbol.asyncIterator]() {
        for (let frame = await this.next(); frame !== null; frame = await this.next())
            yield frame;
    }
    /**
     * Waits until the output since the last match matches `pattern` (a string is matched literally);
     * throws `E_EXPECT_TIMEOUT` after `timeoutMs` (default 10 000) and `E_SESSION_CLOSED` when the session ends first.
     * The frames it reads are consumed.
     */
    async expect(pattern, options = {}) {
        const regex = typeof pattern === "string"
            ? new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
            : new RegExp(pattern.source, pattern.flags.replace("g", "").replace("y", ""));
        const timeoutMs = options.timeoutMs ?? 10_000;
        const deadline = Date.now() + timeoutMs;
        for (;;) {
            // Text already received first: one frame may hold what two calls wait for.
            const match = regex.exec(this.#text);
            if (match !== null && this.#lastFrame !== null) {
                const end = match.index + match[0].length;
                const before = this.#text.slice(0, end);
                this.#text = this.#text.slice(end);
                return { match, frame: this.#lastFrame, before };
            }
            const frame = await this.#nextBefore(deadline);
            if (frame === TIMED_OUT) {
                throw new SpecterError("E_EXPECT_TIMEOUT", `No match for ${regex} within ${timeoutMs} ms`);
            }
            if (frame === null) {
                throw new SpecterError("E_SESSION_CLOSED", `The stream ended before ${regex} matched`);
            }
            const text = frameText(frame);
            if (text === "")
                continue;
            this.#text = (this.#text + text).slice(-EXPECT_WINDOW);
            this.#lastFrame = frame;
        }
    }
    /** Stops the stream (`session.unsubscribe`); frames already queued can still be read. */
    async close() {
        if (this.#ended)
            return;
        this.end();
        await this.#unsubscribe();
    }
    #wake() {
        for (const waiter of this.#waiters.splice(0))
            waiter();
    }
}
