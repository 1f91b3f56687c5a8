/**
 * A session's frame log: every frame in `seq` order, read by any number of subscribers, each from any `seq`
 * with its own cursor, in bounded memory.
 *
 * The log keeps a **head** (the first frames, up to `headBytes`: `start` and the first output, which a
 * late joiner needs) and a **tail** (the latest frames, up to `tailBytes`). Frames between the two are
 * dropped once the tail is full, unless an *authoritative* subscriber has not read them yet: such a
 * subscriber (the stdout client of `run`) never misses a frame, and {@link FrameLog.lagBytes} tells the
 * session how far it is behind, so that the session stops reading the program as it did for a single
 * consumer. Other subscribers never slow the program down: one that falls behind the tail gets one
 * `overflow` frame (`reason: "lagged"`) in place of the frames it missed, with their `seq` range, then
 * goes on from the oldest frame still kept.
 *
 * The interface ({@link FrameLog.append}, {@link FrameLog.subscribe}, {@link Subscription.take}) is what a
 * file-backed, durable log implements too.
 *
 * @module
 */
import type { Frame } from "../protocol/mod.ts";

/** The memory a frame is counted for: its payload (data, error message), or 32 for other frames. */
export function frameBytes(frame: Frame): number {
  return "data" in frame ? frame.data.length : frame.type === "error" ? frame.message.length : 32;
}

/** Sizes of a {@link FrameLog}. */
export interface FrameLogOptions {
  /** Bytes of the first frames kept for the whole session. Default 64 KiB. */
  readonly headBytes?: number;
  /**
   * Bytes of the latest frames kept. Default 1 MiB: frames that live long enough to survive two young-
   * generation collections are copied into the old generation, and at 45 MB/s a 4 MiB tail made garbage
   * collection an eighth of the relay's CPU time.
   */
  readonly tailBytes?: number;
  /** Called after an authoritative subscriber took frames (the session may resume reading). */
  readonly onDrain?: () => void;
  /**
   * The seq of the first frame (default 0). A session a restarted daemon took back goes on from its
   * durable log's end: this log then keeps no head, and subscribers start here by default.
   */
  readonly first?: number;
}

/** How a subscriber reads. */
export interface SubscribeOptions {
  /** The first `seq` wanted (default 0: everything still kept, with an overflow for what is not). */
  readonly from?: number;
  /** Never miss a frame; hold frames back from eviction until taken (see {@link FrameLog.lagBytes}). */
  readonly authoritative?: boolean;
}

/** A reader of a {@link FrameLog} with its own cursor. */
export interface Subscription extends AsyncIterable<Frame> {
  /** The next `seq` this subscriber will read. */
  readonly cursor: number;
  /**
   * The frames from the cursor on, waiting for at least one; an `overflow` frame stands in for frames
   * the log no longer holds. `[]`: the log is closed and this subscriber has read everything.
   */
  take(): Promise<Frame[]>;
  /** The frames from the cursor on that are there now, without waiting (`[]` when none). */
  takeNow(): Frame[];
  /** Stops reading (an authoritative subscriber no longer holds frames back). */
  close(): void;
}

interface Reader {
  cursor: number;
  readonly authoritative: boolean;
  closed: boolean;
}

/** The frames of one session, for many readers. */
export class FrameLog {
  readonly #headBytes: number;
  readonly #tailBytes: number;
  readonly #onDrain: (() => void) | undefined;
  /** Frames kept for good: seq 0 … `#head.length - 1`. */
  readonly #head: Frame[] = [];
  /** `#headBefore[i]`: bytes of the head before `#head[i]`. */
  readonly #headBefore: number[] = [];
  #headFull = false;
  #headSize = 0;
  /** Latest frames: `#tail[i]` has seq `#tailSeq + i`; `#tailStart` is the first live index. */
  #tail: Frame[] = [];
  /** `#before[i]`: bytes appended to the tail before `#tail[i]` (for the lag, in constant time). */
  #before: number[] = [];
  #tailTotal = 0;
  #tailStart = 0;
  #tailSeq = 0;
  #tailSize = 0;
  #next = 0;
  readonly #first: number;
  #dropped = 0;
  #closed = false;
  readonly #readers = new Set<Reader>();
  #waiters: (() => void)[] = [];

  constructor(options: FrameLogOptions = {}) {
    this.#headBytes = options.headBytes ?? 64 * 1024;
    this.#tailBytes = options.tailBytes ?? 1024 * 1024;
    this.#onDrain = options.onDrain;
    this.#first = options.first ?? 0;
    this.#next = this.#tailSeq = this.#first;
    // The head's indexes are seqs: a log that starts later keeps only a tail.
    if (this.#first > 0) this.#headFull = true;
  }

  /** The `seq` the next frame must have. */
  get nextSeq(): number {
    return this.#next;
  }

  /** Frames dropped from the middle of the log so far. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Bytes of frames held: head and tail (what bounds the log's memory). */
  get heldBytes(): number {
    return this.#headSize + this.#tailSize;
  }

  /** True once {@link close} was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Bytes the slowest authoritative subscriber has not read yet (0 without one). */
  get lagBytes(): number {
    let lag = 0;
    for (const reader of this.#readers) {
      if (!reader.authoritative || reader.closed || reader.cursor >= this.#next) continue;
      // Frames it has not read are never evicted: from its cursor on, everything is still here.
      const head = reader.cursor < this.#head.length ? this.#headSize - this.#headBefore[reader.cursor]! : 0;
      const tail = reader.cursor <= this.#tailSeq
        ? this.#tailSize
        : this.#tailTotal - this.#before[this.#tailStart + reader.cursor - this.#tailSeq]!;
      lag = Math.max(lag, head + tail);
    }
    return lag;
  }

  /** Appends the next frame (its `seq` must be {@link nextSeq}). */
  append(frame: Frame): void {
    if (this.#closed) throw new RangeError("The frame log is closed");
    if (frame.seq !== this.#next) throw new RangeError(`Frame seq ${frame.seq}, expected ${this.#next}`);
    this.#next++;
    const size = frameBytes(frame);
    if (!this.#headFull && this.#headSize + size <= this.#headBytes) {
      this.#head.push(frame);
      this.#headBefore.push(this.#headSize);
      this.#headSize += size;
      this.#tailSeq = this.#next;
    } else {
      this.#headFull = true;
      this.#tail.push(frame);
      this.#before.push(this.#tailTotal);
      this.#tailTotal += size;
      this.#tailSize += size;
      this.#evict();
    }
    this.#wake();
  }

  /** No more frames; subscribers get what is left, then `[]`. */
  close(): void {
    this.#closed = true;
    this.#wake();
  }

  /** A new reader from `options.from` (default: the first frame). */
  subscribe(options: SubscribeOptions = {}): Subscription {
    const reader: Reader = {
      cursor: Math.max(this.#first, Math.min(options.from ?? this.#first, this.#next)),
      authoritative: options.authoritative === true,
      closed: false,
    };
    this.#readers.add(reader);
    return new FrameLog.#Subscription(this, reader);
  }

  /**
   * A {@link Subscription}: its methods on a prototype that every subscriber shares (an object literal of
   * closures cost ~0.8 KiB per session, and a thousand idle sessions live in one process: issue 27).
   * Declared in FrameLog's body so that it reaches the log's private parts.
   */
  static readonly #Subscription = class LogSubscription implements Subscription {
    readonly #log: FrameLog;
    readonly #reader: Reader;
    constructor(log: FrameLog, reader: Reader) {
      this.#log = log;
      this.#reader = reader;
    }
    get cursor(): number {
      return this.#reader.cursor;
    }
    take(): Promise<Frame[]> {
      return this.#log.#take(this.#reader);
    }
    takeNow(): Frame[] {
      return this.#reader.closed ? [] : this.#log.#collect(this.#reader);
    }
    close(): void {
      this.#reader.closed = true;
      this.#log.#readers.delete(this.#reader);
      this.#log.#evict();
    }
    async *[Symbol.asyncIterator](): AsyncGenerator<Frame> {
      for (;;) {
        const frames = await this.#log.#take(this.#reader);
        if (frames.length === 0) return;
        yield* frames;
      }
    }
  };

  /** Drops tail frames beyond `tailBytes` that no authoritative reader still needs. */
  #evict(): void {
    let keepFrom = this.#next;
    for (const reader of this.#readers) {
      if (reader.authoritative && !reader.closed) keepFrom = Math.min(keepFrom, reader.cursor);
    }
    while (this.#tailSize > this.#tailBytes && this.#tailSeq < keepFrom && this.#tailSeq < this.#next - 1) {
      this.#tailSize -= frameBytes(this.#tail[this.#tailStart]!);
      this.#tail[this.#tailStart++] = undefined as unknown as Frame; // Let it be collected.
      this.#tailSeq++;
      this.#dropped++;
    }
    if (this.#tailStart > 1024 && this.#tailStart * 2 > this.#tail.length) {
      this.#tail = this.#tail.slice(this.#tailStart);
      this.#before = this.#before.slice(this.#tailStart);
      this.#tailStart = 0;
    }
  }

  async #take(reader: Reader): Promise<Frame[]> {
    while (!reader.closed && reader.cursor >= this.#next && !this.#closed) {
      await new Promise<void>((resolve) => {
        // The usual lone waiter in an array of its own size (a push onto [] makes room for 17).
        if (this.#waiters.length === 0) this.#waiters = [resolve];
        else this.#waiters.push(resolve);
      });
    }
    if (reader.closed) return [];
    return this.#collect(reader);
  }

  /** Moves `reader` past every frame there is, returning them (an overflow frame for what is gone). */
  #collect(reader: Reader): Frame[] {
    const out: Frame[] = [];
    for (; reader.cursor < this.#head.length; reader.cursor++) out.push(this.#head[reader.cursor]!);
    if (reader.cursor < this.#tailSeq) {
      const last = this.#tailSeq - 1;
      out.push({
        seq: last,
        ts: (this.#tail[this.#tailStart] ?? out.at(-1))?.ts ?? 0,
        type: "overflow",
        reason: "lagged",
        missed_from: reader.cursor,
        missed_to: last,
      });
      reader.cursor = this.#tailSeq;
    }
    for (; reader.cursor < this.#next; reader.cursor++) {
      out.push(this.#tail[this.#tailStart + reader.cursor - this.#tailSeq]!);
    }
    if (reader.authoritative) {
      this.#evict();
      this.#onDrain?.();
    }
    return out;
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}
