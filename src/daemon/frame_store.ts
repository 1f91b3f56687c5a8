/**
 * A session's durable frame log: append-only NDJSON segments on disk, written **before** a frame reaches
 * any client, so what a client saw survives a `kill -9` of the daemon (and, after the next `fdatasync`, a
 * power loss).
 *
 * Layout of a log directory (one per session):
 * - `<first seq, 20 digits>.ndjson`: a header line ({@link LogHeader}) then one frame per line, seqs
 *   contiguous. A record may carry `raw`: how many bytes of the program's output the frames up to it hold
 *   (a restarted daemon resumes reading the terminal there, so no byte is lost or read twice).
 * - `<first seq>.idx`: a sparse index, one `seq offset` line every `indexEvery` bytes of records;
 *   rebuildable, never trusted over the log (an entry that does not point at its record is ignored).
 *
 * Recovery on open cuts a torn tail (a last line without its newline, one that does not parse, or a seq
 * out of order) and syncs the cut. Segments roll at `segmentBytes`; the oldest whole segments go once the
 * log exceeds `maxBytes`.
 *
 * The writer is this room; its neighbours are the log's files (`log_segments.ts`), its recovery on open
 * (`log_recovery.ts`) and its readers (`log_reader.ts`).
 *
 * @module
 */
import { join } from "node:path";
import { DaemonError } from "../errors.ts";
import { type Frame, LOG_FORMAT, type LogHeader } from "../protocol/mod.ts";
import { encoder } from "./_log_lines.ts";
import { listSegments, segmentName, syncDir, writeAll } from "./log_segments.ts";
import { recoverLog, type Recovery } from "./log_recovery.ts";

export { listSegments } from "./log_segments.ts";
export { type Recovery } from "./log_recovery.ts";
export { type LogLine, type LogRecord, readLog, type ReadLogOptions, readLogText } from "./log_reader.ts";

/** When appended records are made durable against an OS crash or power loss (a `kill -9` needs none). */
export type SyncPolicy = "always" | "never" | { readonly everyMs: number };

/** How a log is kept. */
export interface FrameStoreOptions {
  /** The log's directory (created 0700 when missing). */
  readonly dir: string;
  /** The session's name, written into each segment's header. */
  readonly session: string;
  /** A segment rolls once it reaches this size. Default 16 MiB. */
  readonly segmentBytes?: number;
  /** The oldest segments are removed while the log is larger. Default 256 MiB. */
  readonly maxBytes?: number;
  /** An index entry is written every this many bytes of records. Default 64 KiB. */
  readonly indexEvery?: number;
}

const DEFAULT_SEGMENT_BYTES = 16 * 1024 * 1024;
const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;
const DEFAULT_INDEX_EVERY = 64 * 1024;

/** The writer of one session's log (one per log directory, held by the daemon). */
export class FrameStore {
  /** The log's identity: a seq is only meaningful with it (a recreated log gets a new one). */
  readonly logId: string;
  /** What opening the log repaired. */
  readonly recovery: Recovery;
  readonly #dir: string;
  readonly #session: string;
  readonly #segmentBytes: number;
  readonly #maxBytes: number;
  readonly #indexEvery: number;
  #file: Deno.FsFile | null = null;
  #index: Deno.FsFile | null = null;
  #segmentFirst = 0;
  #size = 0;
  #sinceIndex = 0;
  #nextSeq = 0;
  #lastRaw = 0;
  #dirty = false;
  #dirDirty = false;
  #closed = false;

  private constructor(options: FrameStoreOptions, logId: string, recovery: Recovery) {
    this.#dir = options.dir;
    this.#session = options.session;
    this.#segmentBytes = options.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
    this.#maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.#indexEvery = options.indexEvery ?? DEFAULT_INDEX_EVERY;
    this.logId = logId;
    this.recovery = recovery;
  }

  /**
   * Opens (creating when missing) the log in `options.dir`, cutting a torn tail. Throws `E_LOG_WRITE` when
   * the directory or a segment cannot be created or repaired.
   */
  static open(options: FrameStoreOptions): FrameStore {
    try {
      Deno.mkdirSync(options.dir, { recursive: true, mode: 0o700 });
      return FrameStore.#open(options);
    } catch (error: unknown) {
      if (error instanceof DaemonError) throw error;
      throw new DaemonError("E_LOG_WRITE", `The frame log "${options.dir}" cannot be opened`, {
        cause: error,
        details: { dir: options.dir },
      });
    }
  }

  static #open(options: FrameStoreOptions): FrameStore {
    const found = recoverLog(options.dir);
    const store = new FrameStore(options, found.logId, found.recovery);
    const tail = found.tail;
    if (tail === null) {
      store.#startSegment(0);
      return store;
    }
    store.#file = tail.file;
    store.#index = tail.index;
    store.#segmentFirst = tail.segmentFirst;
    store.#size = tail.size;
    store.#nextSeq = tail.nextSeq;
    store.#lastRaw = tail.lastRaw;
    return store;
  }

  /** The seq the next appended frame must have (one past the last record; 0 for a new log). */
  get nextSeq(): number {
    return this.#nextSeq;
  }

  /** The output offset of the last record that carried one (0 when none did). */
  get lastRaw(): number {
    return this.#lastRaw;
  }

  /** The first seq of the segment being written (it changes when a segment is started). */
  get segmentFirst(): number {
    return this.#segmentFirst;
  }

  /** Bytes of the segment being written (its header and records). */
  get segmentSize(): number {
    return this.#size;
  }

  /** True when records were appended since the last {@link sync}. */
  get dirty(): boolean {
    return this.#dirty;
  }

  /**
   * Appends `frame` (whose seq must be {@link nextSeq}) with the output offset `raw`, then syncs under the
   * `always` policy. Throws `E_LOG_WRITE` when the write fails (disk full): what was written of the record
   * is cut again, so the log stays whole.
   */
  append(frame: Frame, raw: number | null = null, policy: SyncPolicy = "never"): void {
    if (this.#closed) throw new DaemonError("E_LOG_WRITE", `The frame log of "${this.#session}" is closed`);
    if (frame.seq !== this.#nextSeq) {
      throw new DaemonError(
        "E_LOG_WRITE",
        `Frame seq ${frame.seq} does not follow the log's last (${this.#nextSeq - 1})`,
      );
    }
    if (this.#file === null) {
      throw new DaemonError("E_LOG_WRITE", `The frame log of "${this.#session}" has no segment to write to`);
    }
    if (this.#size >= this.#segmentBytes) {
      try {
        this.#roll(frame.seq);
      } catch (error: unknown) {
        throw new DaemonError(
          "E_LOG_WRITE",
          `Starting a new segment of the frame log of "${this.#session}" failed`,
          {
            cause: error,
            details: { dir: this.#dir, seq: frame.seq },
          },
        );
      }
    }
    const line = encoder.encode(JSON.stringify(raw === null ? frame : { ...frame, raw }) + "\n");
    const file = this.#file!;
    try {
      writeAll(file, line);
    } catch (error: unknown) {
      try {
        file.truncateSync(this.#size);
        file.seekSync(this.#size, Deno.SeekMode.Start);
      } catch {
        // The cut failed too: recovery on the next open cuts the partial record.
      }
      throw new DaemonError("E_LOG_WRITE", `Appending to the frame log of "${this.#session}" failed`, {
        cause: error,
        details: { dir: this.#dir, seq: frame.seq },
      });
    }
    if (this.#sinceIndex >= this.#indexEvery) {
      this.#sinceIndex = 0;
      try {
        writeAll(this.#index!, encoder.encode(`${frame.seq} ${this.#size}\n`));
      } catch {
        // The index is only a shortcut: reads scan further without this entry.
      }
    }
    this.#size += line.length;
    this.#sinceIndex += line.length;
    this.#nextSeq = frame.seq + 1;
    if (raw !== null) this.#lastRaw = raw;
    this.#dirty = true;
    if (policy === "always") this.sync();
  }

  /** `fdatasync` of the records appended since the last call (and of a new segment's directory entry). */
  sync(): void {
    if (!this.#dirty || this.#file === null) return;
    try {
      this.#file.syncDataSync();
      if (this.#dirDirty) syncDir(this.#dir);
      this.#dirDirty = false;
      this.#dirty = false;
    } catch (error: unknown) {
      throw new DaemonError("E_LOG_WRITE", `Syncing the frame log of "${this.#session}" failed`, {
        cause: error,
        details: { dir: this.#dir },
      });
    }
  }

  /**
   * Syncs and closes the log (idempotent). Never throws: a log being closed after a failed write (a full
   * disk) cannot be synced either; what was written stays, and recovery cuts a torn tail.
   */
  close(): void {
    if (this.#closed) return;
    try {
      this.sync();
    } catch {
      // See above: nothing more can be done for this log.
    } finally {
      this.#closed = true;
      this.#file?.close();
      this.#index?.close();
    }
  }

  #startSegment(firstSeq: number): void {
    const name = segmentName(firstSeq);
    const header: LogHeader = {
      format: LOG_FORMAT,
      log_id: this.logId,
      session: this.#session,
      first_seq: firstSeq,
      created: Date.now() / 1000,
    };
    const file = Deno.openSync(join(this.#dir, `${name}.ndjson`), {
      read: true,
      write: true,
      createNew: true,
      mode: 0o600,
    });
    const bytes = encoder.encode(JSON.stringify(header) + "\n");
    writeAll(file, bytes);
    this.#file = file;
    this.#index = Deno.openSync(join(this.#dir, `${name}.idx`), {
      write: true,
      append: true,
      create: true,
      mode: 0o600,
    });
    this.#segmentFirst = firstSeq;
    this.#size = bytes.length;
    this.#sinceIndex = this.#indexEvery; // The first record is indexed.
    // The new entry reaches the disk with the next sync (an fsync of the directory costs milliseconds,
    // which a spawn should not wait for; a segment lost to a power loss before then held nothing synced).
    this.#dirDirty = true;
    this.#dirty = true;
  }

  #roll(firstSeq: number): void {
    try {
      this.#file?.syncDataSync();
    } finally {
      // Closed, and forgotten: should the next segment not be made, nothing writes to (or closes) these.
      this.#file?.close();
      this.#index?.close();
      this.#file = null;
      this.#index = null;
    }
    this.#dirty = false;
    this.#startSegment(firstSeq);
    // Retention: whole segments, oldest first, never the one being written.
    const segments = listSegments(this.#dir);
    let total = 0;
    const sizes = segments.map((first) => {
      const size = Deno.statSync(join(this.#dir, `${segmentName(first)}.ndjson`)).size;
      total += size;
      return size;
    });
    for (let i = 0; i < segments.length - 1 && total > this.#maxBytes; i++) {
      if (segments[i] === this.#segmentFirst) break;
      Deno.removeSync(join(this.#dir, `${segmentName(segments[i]!)}.ndjson`));
      try {
        Deno.removeSync(join(this.#dir, `${segmentName(segments[i]!)}.idx`));
      } catch {
        // An index may never have been written.
      }
      total -= sizes[i]!;
    }
  }
}
