/**
 * The per-session queue between the reader (producer) and one consumer, counting unconsumed payload
 * bytes so the session can stop reading the terminal when the consumer falls behind.
 *
 * @module
 */
import type { Frame } from "../protocol/mod.ts";

/** A single-consumer frame queue. */
export class FrameQueue {
  #frames: Frame[] = [];
  #bytes = 0;
  #closed = false;
  #waiter: (() => void) | undefined;
  #onDrain: () => void;

  /** `onDrain` runs after the consumer took frames (the session may resume reading). */
  constructor(onDrain: () => void) {
    this.#onDrain = onDrain;
  }

  /** Unconsumed payload bytes (UTF-16 length of data and error messages, 32 per other frame). */
  get bytes(): number {
    return this.#bytes;
  }

  /** True once {@link close} was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Appends a frame. */
  push(frame: Frame): void {
    this.#frames.push(frame);
    // Frames without data (errors answering bad driver lines, pongs) count too: a driver flooding them
    // at a consumer that does not read must meet the same limit.
    this.#bytes += "data" in frame ? frame.data.length : frame.type === "error" ? frame.message.length : 32;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.();
  }

  /** No more frames will come; a waiting consumer gets what is left. */
  close(): void {
    this.#closed = true;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.();
  }

  /** Takes every queued frame, waiting for at least one; `[]` means closed and drained. */
  async take(): Promise<Frame[]> {
    while (this.#frames.length === 0) {
      if (this.#closed) return [];
      await new Promise<void>((resolve) => this.#waiter = resolve);
    }
    const frames = this.#frames;
    this.#frames = [];
    this.#bytes = 0;
    this.#onDrain();
    return frames;
  }
}
