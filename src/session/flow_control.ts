/**
 * `FlowControl`: when a session stops reading its program, and who waits for room.
 *
 * - **The authoritative subscriber** (`frames()`) more than `bufferBytes` behind pauses reading: the
 *   program then blocks in `write`, as with a slow real terminal. Reading resumes once it is down to half
 *   of that; if it stays behind for `overflowTimeoutMs`, an `overflow` frame (`reason: "buffer"`) says so,
 *   output read from then on is dropped and the program is killed.
 * - **The terminal model** behind its high watermark pauses reading too, until it is down to the low one.
 * - **Drivers** wait in {@link FlowControl.inputRoom} until their input is taken (back-pressure on their
 *   source rather than a buffer of what the program does not read).
 *
 * @module
 */
import type { FrameBody } from "../protocol/mod.ts";
import type { Timer } from "./timers.ts";

/** The limits of {@link FlowControl}. */
export interface FlowOptions {
  /** Payload bytes the authoritative subscriber may be behind before reading pauses. */
  readonly bufferBytes: number;
  /** How long it may stay behind before the session overflows and the program is killed. */
  readonly overflowTimeoutMs: number;
}

/** What {@link FlowControl} needs of its session. */
export interface FlowHost {
  emit(body: FrameBody): void;
  later(ms: number, fn: () => void): Timer;
  clear(timer: Timer | undefined): void;
  /** SIGKILLs every process of the program. */
  kill(): void;
  /** Reading may go on. */
  wake(): void;
  /** Payload bytes the authoritative subscriber has not taken yet. */
  lagBytes(): number;
  /** Bytes of input waiting for the program. */
  inputPending(): number;
  /** True once no input can be written any more (EOF or `exit`). */
  ended(): boolean;
}

/** Pauses and resumes reading; holds the drivers waiting for room. */
export class FlowControl {
  readonly #options: FlowOptions;
  readonly #host: FlowHost;
  /** Reading paused because the authoritative subscriber is behind. */
  #paused = false;
  /** Reading paused because the terminal model is behind. */
  #backlogged = false;
  /** Output is dropped from now on (after an overflow, a spent output budget or a failure). */
  #discard = false;
  #overflowTimer: Timer | undefined;
  #roomWaiters: { readonly maxPending: number; readonly resolve: () => void }[] = [];

  constructor(options: FlowOptions, host: FlowHost) {
    this.#options = options;
    this.#host = host;
  }

  /** True while reading the terminal is paused, for the subscriber or for the terminal model. */
  get blocked(): boolean {
    return this.#paused || this.#backlogged;
  }

  /** True once output is dropped rather than delivered. */
  get discarding(): boolean {
    return this.#discard;
  }

  /** Drops output from now on; reading never pauses again (nothing more reaches the frame log). */
  discard(): void {
    this.#discard = true;
  }

  /** A frame was appended: pause once the authoritative subscriber is too far behind. */
  appended(): void {
    if (!this.#paused && !this.#discard && this.#host.lagBytes() > this.#options.bufferBytes) this.#pause();
  }

  /** The authoritative subscriber took frames. */
  drained(): void {
    if (this.#paused && this.#host.lagBytes() <= this.#options.bufferBytes / 2) this.#resume();
    this.wakeRoomWaiters();
  }

  /** The terminal model fell behind (`true`) or caught up (`false`). */
  backlog(behind: boolean): void {
    this.#backlogged = behind;
    if (!behind) this.#host.wake();
  }

  /**
   * Resolves once at most `maxPending` bytes of input wait for the program and the authoritative
   * subscriber is within `bufferBytes` (or the session is over).
   */
  inputRoom(maxPending: number): Promise<void> {
    if (this.#hasRoom(maxPending)) return Promise.resolve();
    return new Promise((resolve) => this.#roomWaiters.push({ maxPending, resolve }));
  }

  /** Resolves the {@link inputRoom} callers that have room now. */
  wakeRoomWaiters(): void {
    if (this.#roomWaiters.length === 0) return;
    this.#roomWaiters = this.#roomWaiters.filter((waiter) => {
      if (!this.#hasRoom(waiter.maxPending)) return true;
      waiter.resolve();
      return false;
    });
  }

  #hasRoom(maxPending: number): boolean {
    const host = this.#host;
    return host.ended() ||
      (host.inputPending() <= maxPending && host.lagBytes() <= this.#options.bufferBytes);
  }

  #pause(): void {
    this.#paused = true;
    this.#overflowTimer = this.#host.later(this.#options.overflowTimeoutMs, () => {
      if (!this.#paused) return;
      this.#host.emit({ type: "overflow", reason: "buffer", limit: this.#options.bufferBytes });
      // Output read from now on is dropped (the overflow frame says so) so the terminal can drain.
      this.#discard = true;
      this.#resume();
      this.#host.kill();
    });
  }

  #resume(): void {
    this.#paused = false;
    this.#host.clear(this.#overflowTimer);
    this.#overflowTimer = undefined;
    this.#host.wake();
  }
}
