/**
 * A daemon client on a WebSocket (`/v1/ws`): JSON-RPC 2.0 as NDJSON, one or more lines per message both
 * ways. What the daemon sends within one turn goes out as one message of at most 1 MiB, cut at line
 * ends (a burst of frames costs one message, and compresses as one). Bounded as the unix socket's
 * clients are: a message over {@link MAX_MESSAGE_BYTES} or a binary one ends the connection (`ws_socket.ts`),
 * and a client with more than {@link MAX_WS_UNSENT} bytes waiting that took nothing for {@link STALL_MS} is
 * dropped, as is one past {@link HARD_WS_UNSENT} however it reads: it never slows a program or grows the
 * daemon's memory without bound, and it can attach again from the last `seq` it saw. A client's lines are
 * handled at most {@link MAX_IN_FLIGHT} at a time, and a message's lines yield to other work every few
 * milliseconds: a message of many cheap calls cannot hold the daemon.
 *
 * @module
 */
import { zstdCompressSync } from "node:zlib";
import type { Access, Peer, PeerHost } from "./peer.ts";
import { WsSocket } from "./ws_socket.ts";
import { concatBytes } from "../frames/mod.ts";

/** Calls of one client being answered at once; its next lines wait (and so does reading its socket). */
export const MAX_IN_FLIGHT = 8;
/** A message's lines are handled for at most this long before other work gets a turn. */
const LINE_TURN_MS = 8;
/** Bytes waiting for a client beyond which one that takes nothing for {@link STALL_MS} is dropped. */
export const MAX_WS_UNSENT = 8 * 1024 * 1024;
/**
 * Beyond this a client is dropped however it reads. An attach's history (at most 32 MiB, sent at once) is
 * allowed on top, until the client took it.
 */
export const HARD_WS_UNSENT = 16 * 1024 * 1024;
/** Largest message sent at once (a longer burst is split at line ends). */
const MAX_BATCH = 1024 * 1024;
/** How long a client over {@link MAX_WS_UNSENT} may take nothing before it is dropped. */
export const STALL_MS = 2_000;

const encoder = new TextEncoder();

/** Where the message starting at `at` ends: the last line end within {@link MAX_BATCH}, else the next one. */
function cutAt(bytes: Uint8Array, at: number): number {
  if (bytes.length - at <= MAX_BATCH) return bytes.length;
  const window = bytes.subarray(at, at + MAX_BATCH);
  const last = window.lastIndexOf(0x0a);
  if (last >= 0) return at + last + 1;
  const next = bytes.indexOf(0x0a, at + MAX_BATCH);
  return next < 0 ? bytes.length : next + 1;
}

/** A WebSocket client. */
export class WsPeer implements Peer {
  readonly name: string;
  readonly access: Access;
  readonly touched = new Set<string>();
  greeted = false;
  agentInput: ReadableStreamDefaultController<Uint8Array> | null = null;
  readonly #socket: WsSocket;
  readonly #host: PeerHost;
  #batch: Uint8Array[] = [];
  #batchBytes = 0;
  #scheduled = false;
  #compress = false;
  #closed = false;
  #lastBuffered = 0;
  /** Bytes of an attach's history allowed beyond {@link HARD_WS_UNSENT} until the client took them. */
  #allowance = 0;
  #progressAt = performance.now();

  /** Serves the WebSocket on `conn` (the 101 answer was written; `rest` came after the request head). */
  constructor(conn: Deno.Conn, rest: Uint8Array, name: string, access: Access, host: PeerHost) {
    this.name = name;
    this.access = access;
    this.#host = host;
    this.#socket = new WsSocket(conn, rest, {
      text: (message) => this.#message(message),
      refused: (reason) => this.#host.line(this, new Error(reason)),
      closed: (reason) => this.#finish(reason),
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  get unsent(): number {
    return this.#batchBytes + this.#buffered();
  }

  compress(on: boolean): void {
    this.#flush(); // What was queued before the switch goes as the client expects it.
    this.#compress = on;
  }

  send(message: unknown): void {
    this.sendBytes(encoder.encode(JSON.stringify(message) + "\n"));
  }

  sendBytes(bytes: Uint8Array): void {
    if (this.#closed) return;
    this.#noteProgress();
    const before = this.unsent;
    if (before < HARD_WS_UNSENT) this.#allowance = 0; // The history was taken.
    if (bytes.length > MAX_WS_UNSENT) this.#allowance = bytes.length; // A history: sent whole, once.
    if (
      before + bytes.length > HARD_WS_UNSENT + this.#allowance ||
      (before > MAX_WS_UNSENT && performance.now() - this.#progressAt > STALL_MS)
    ) {
      this.#drop();
      return;
    }
    this.#batch.push(bytes);
    this.#batchBytes += bytes.length;
    if (this.#batchBytes >= MAX_BATCH) this.#flush();
    else if (!this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(() => this.#flush());
    }
  }

  checkStall(): void {
    if (this.#closed) return;
    this.#noteProgress();
    if (this.unsent > MAX_WS_UNSENT && performance.now() - this.#progressAt > STALL_MS) this.#drop();
  }

  /** The client took bytes since the last look (or nothing waits for it): it is not stalled. */
  #noteProgress(): void {
    const buffered = this.#buffered();
    if (buffered < this.#lastBuffered || buffered === 0) this.#progressAt = performance.now();
    this.#lastBuffered = buffered;
  }

  closeAfterSending(): void {
    if (this.#closed) return;
    this.#flush();
    this.#closed = true;
    this.#host.closed(this, "refused");
    try {
      this.#socket.close(1008, "refused");
    } catch {
      // Closed by the client meanwhile.
    }
  }

  close(reason = "closed by the daemon"): void {
    if (this.#closed) return;
    try {
      this.#socket.close(1001, reason.slice(0, 100));
    } catch {
      // Closed by the client meanwhile.
    }
    this.#finish(reason);
  }

  #buffered(): number {
    return this.#socket.queued;
  }

  /** Hands a message's lines on, {@link MAX_IN_FLIGHT} at most at once, yielding every few milliseconds. */
  async #message(data: string): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    let turn = performance.now();
    for (const line of data.split("\n")) {
      if (this.#closed) return;
      if (line.trim() === "") continue;
      const answered: Promise<void> = Promise.resolve(this.#host.line(this, line)).finally(() =>
        inFlight.delete(answered)
      );
      inFlight.add(answered);
      if (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
      if (performance.now() - turn > LINE_TURN_MS) {
        await new Promise((resolve) => setTimeout(resolve, 0));
        turn = performance.now();
      }
    }
    await Promise.all(inFlight);
  }

  #flush(): void {
    this.#scheduled = false;
    if (this.#closed || this.#batchBytes === 0) return;
    const parts = this.#batch;
    const total = this.#batchBytes;
    this.#batch = [];
    this.#batchBytes = 0;
    const joined = parts.length === 1 ? parts[0]! : concatBytes(parts);
    try {
      for (let at = 0; at < total;) {
        const end = cutAt(joined, at);
        const part = joined.subarray(at, end);
        if (this.#compress) this.#socket.sendBinary(zstdCompressSync(part));
        else this.#socket.sendText(part); // Whole JSON lines: UTF-8 already.
        at = end;
      }
    } catch {
      this.#finish("failed to send");
    }
    this.#lastBuffered = this.#buffered(); // What was just queued is not the client's progress.
  }

  #drop(): void {
    try {
      this.#socket.close(1008, "dropped: it does not read what it is sent");
    } catch {
      // Closed already.
    }
    this.#finish("dropped: it does not read what it is sent");
  }

  #finish(reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#batch = [];
    this.#batchBytes = 0;
    this.#host.closed(this, reason);
  }
}
