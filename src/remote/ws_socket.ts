/**
 * The server side of a WebSocket (RFC 6455) on a connection the listener accepted itself, so that every
 * bound is the listener's: a frame whose declared length passes {@link MAX_MESSAGE_BYTES} closes the
 * connection before its payload is read (1009), a message is handed on only when whole and valid UTF-8,
 * the next frame is read only after the previous message was handled (a client that sends faster than the
 * daemon answers waits in its own TCP buffers), `queued` counts what was not yet written to the kernel, and
 * a client that sends nothing for {@link IDLE_MS} (pings are answered by browsers) is closed.
 *
 * @module
 */
import { concatBytes } from "../frames/mod.ts";
import { writeAll } from "./http_head.ts";
import { type ClientFrame, frameLength, MAX_MESSAGE_BYTES, takeFrame } from "./ws_frame.ts";

export { MAX_MESSAGE_BYTES };
/** A ping is sent after this long without a message. */
const PING_MS = 30_000;
/** A client that sent nothing (not even a pong) for this long is closed. */
export const IDLE_MS = 90_000;

/** What a socket tells its owner. */
export interface WsHandlers {
  /** A whole text message; the next one is read once the returned promise settles. */
  text(message: string): void | Promise<void>;
  /** The client broke the protocol (a binary message, bad UTF-8, a frame too large): why. */
  refused(reason: string): void;
  /** The connection is over (called once). */
  closed(reason: string): void;
}

const decoder = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/** One client's WebSocket. */
export class WsSocket {
  readonly #conn: Deno.Conn;
  readonly #handlers: WsHandlers;
  #pending: Uint8Array;
  #queue: Uint8Array[] = [];
  #queued = 0;
  #writing = false;
  #closed = false;
  #lastHeard = performance.now();
  /** Closed with a close frame still to write: the connection goes once the queue is written. */
  #closing = false;
  /** A fragmented text message is being collected. */
  #text = false;
  #released = false;
  readonly #timer: ReturnType<typeof setInterval>;

  /** Starts reading `conn` (after the 101 answer); `rest`: bytes that came with the request head. */
  constructor(conn: Deno.Conn, rest: Uint8Array, handlers: WsHandlers) {
    this.#conn = conn;
    this.#handlers = handlers;
    this.#pending = rest;
    this.#timer = setInterval(() => {
      const quiet = performance.now() - this.#lastHeard;
      if (quiet > IDLE_MS) this.close(1001, "idle");
      else if (quiet > PING_MS) this.#frame(0x9, new Uint8Array(0));
    }, PING_MS / 2);
    Deno.unrefTimer(this.#timer);
    void this.#readLoop();
  }

  /** Bytes queued and not yet taken by the kernel. */
  get queued(): number {
    return this.#queued;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Sends a text message (`bytes`: UTF-8). */
  sendText(bytes: Uint8Array): void {
    this.#frame(0x1, bytes);
  }

  /** Sends a binary message. */
  sendBinary(bytes: Uint8Array): void {
    this.#frame(0x2, bytes);
  }

  /** Sends a close frame with `code` and `reason`, then ends the connection once the queue is written. */
  close(code: number, reason: string): void {
    if (this.#closed) return;
    const text = encoder.encode(reason.slice(0, 100));
    const payload = new Uint8Array(2 + text.length);
    payload[0] = code >> 8;
    payload[1] = code & 0xff;
    payload.set(text, 2);
    this.#frame(0x8, payload);
    this.#finish(reason, true);
  }

  #frame(opcode: number, payload: Uint8Array): void {
    if (this.#closed) return;
    const n = payload.length;
    const header = n < 126 ? new Uint8Array(2) : n < 65536 ? new Uint8Array(4) : new Uint8Array(10);
    header[0] = 0x80 | opcode;
    if (n < 126) header[1] = n;
    else if (n < 65536) {
      header[1] = 126;
      header[2] = n >> 8;
      header[3] = n & 0xff;
    } else {
      header[1] = 127;
      new DataView(header.buffer).setBigUint64(2, BigInt(n));
    }
    this.#queue.push(header, payload);
    this.#queued += header.length + n;
    if (!this.#writing) void this.#writeLoop();
  }

  async #writeLoop(): Promise<void> {
    this.#writing = true;
    try {
      while (this.#queue.length > 0) {
        const chunk = this.#queue.shift()!;
        await writeAll(this.#conn, chunk);
        this.#queued -= chunk.length;
      }
    } catch {
      this.#finish("write failed", false);
    } finally {
      this.#writing = false;
    }
    if (this.#closing) this.#release();
  }

  async #readLoop(): Promise<void> {
    const chunk = new Uint8Array(64 * 1024);
    const parts: Uint8Array[] = [];
    let partsBytes = 0;
    // Bytes read and not yet joined to `#pending`: a large frame sent in small pieces is joined once it can
    // be whole, not once per piece (which would copy it again with every read).
    const waiting: Uint8Array[] = [];
    let waitingBytes = 0;
    try {
      for (;;) {
        const frame = this.#takeFrame();
        if (frame === "too large") {
          this.#handlers.refused(`a message is longer than ${MAX_MESSAGE_BYTES} bytes`);
          this.close(1009, "message too large");
          return;
        }
        if (frame === "bad") {
          this.#handlers.refused("the client broke the WebSocket protocol");
          this.close(1002, "protocol error");
          return;
        }
        if (frame === null) {
          const n = await this.#conn.read(chunk);
          if (n === null) break;
          this.#lastHeard = performance.now();
          waiting.push(chunk.slice(0, n));
          waitingBytes += n;
          const need = frameLength(this.#pending);
          if (need === null || this.#pending.length + waitingBytes >= need) {
            this.#pending = this.#pending.length === 0 && waiting.length === 1
              ? waiting[0]!
              : concatBytes([this.#pending, ...waiting]);
            waiting.length = 0;
            waitingBytes = 0;
          }
          continue;
        }
        const { fin, opcode, payload } = frame;
        if (opcode === 0x8) {
          this.close(1000, "bye");
          return;
        }
        if (opcode === 0x9) {
          this.#frame(0xa, payload);
          continue;
        }
        if (opcode === 0xa) continue;
        if (opcode === 0x2) {
          this.#handlers.refused("binary messages are not taken (send JSON-RPC as text)");
          this.close(1003, "binary messages are not taken");
          return;
        }
        // An unknown opcode, a continuation of no message, or a new message inside a fragmented one: the
        // connection fails (RFC 6455 §5.2, §5.4), rather than bytes of one frame joining another's message.
        if ((opcode !== 0x0 && opcode !== 0x1) || (opcode === 0x0) !== this.#text) {
          this.#handlers.refused("the client broke the WebSocket protocol");
          this.close(1002, "protocol error");
          return;
        }
        this.#text = true;
        parts.push(payload);
        partsBytes += payload.length;
        if (partsBytes > MAX_MESSAGE_BYTES) {
          this.#handlers.refused(`a message is longer than ${MAX_MESSAGE_BYTES} bytes`);
          this.close(1009, "message too large");
          return;
        }
        if (!fin) continue;
        const whole = parts.length === 1 ? parts[0]! : concatBytes(parts);
        parts.length = 0;
        partsBytes = 0;
        this.#text = false;
        let text: string;
        try {
          text = decoder.decode(whole);
        } catch {
          this.#handlers.refused("a message is not valid UTF-8");
          this.close(1007, "invalid UTF-8");
          return;
        }
        await this.#handlers.text(text);
        if (this.#closed) return;
      }
    } catch {
      // Reset by the peer, or a failed TLS read: the connection is over.
    }
    this.#finish("disconnected", false);
  }

  /** The next whole frame of `#pending` (unmasked), null when more bytes are needed. */
  #takeFrame(): ClientFrame | null | "too large" | "bad" {
    const frame = takeFrame(this.#pending);
    if (frame !== null && typeof frame === "object") this.#pending = this.#pending.subarray(frame.size);
    return frame;
  }

  #finish(reason: string, flush: boolean): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    this.#handlers.closed(reason);
    if (flush && (this.#writing || this.#queue.length > 0)) {
      this.#closing = true; // The close frame is written first.
      if (!this.#writing) void this.#writeLoop();
      setTimeout(() => this.#release(), 2000); // Not forever: a client that reads nothing.
      return;
    }
    this.#release();
  }

  #release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#queue = [];
    this.#queued = 0;
    try {
      this.#conn.close();
    } catch {
      // Closed already.
    }
  }
}
