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
 * @module
 */
import { join } from "node:path";
import { DaemonError } from "../errors.ts";
import { type Frame, LOG_FORMAT, type LogHeader, LogHeaderSchema } from "../protocol/mod.ts";

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

/** What {@link FrameStore.open} found and repaired. */
export interface Recovery {
  /** Bytes cut from the end of the last segment (a torn or invalid tail); 0 when it was whole. */
  readonly cutBytes: number;
  /** The segment that was cut, or whose torn header made it be removed; null when nothing was. */
  readonly segment: string | null;
}

/** One record read back: the frame, and the output offset it carried. */
export interface LogRecord {
  readonly frame: Frame;
  readonly raw: number | null;
}

/** A record as its line: the frame's JSON without `raw`, sent on as it is (see {@link readLogText}). */
export interface LogLine {
  readonly seq: number;
  readonly text: string;
}

const DEFAULT_SEGMENT_BYTES = 16 * 1024 * 1024;
const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;
const DEFAULT_INDEX_EVERY = 64 * 1024;
const NEWLINE = 0x0a;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function segmentName(firstSeq: number): string {
  return String(firstSeq).padStart(20, "0");
}

/** The segments of a log directory, by first seq (oldest first). */
export function listSegments(dir: string): number[] {
  const out: number[] = [];
  try {
    for (const entry of Deno.readDirSync(dir)) {
      const match = /^(\d{20})\.ndjson$/.exec(entry.name);
      if (match !== null && entry.isFile) out.push(Number(match[1]));
    }
  } catch (error: unknown) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw new DaemonError("E_LOG_CORRUPT", `The frame log "${dir}" cannot be listed`, { cause: error });
  }
  return out.sort((a, b) => a - b);
}

/**
 * Splits `bytes` into complete lines (each without its newline, with the byte offsets where it starts and
 * where the next one does) and the offset after the last one.
 */
function lines(
  bytes: Uint8Array,
  base: number,
): { lines: { start: number; next: number; text: string }[]; end: number } {
  const out: { start: number; next: number; text: string }[] = [];
  let start = 0;
  for (;;) {
    const nl = bytes.indexOf(NEWLINE, start);
    if (nl < 0) break;
    out.push({ start: base + start, next: base + nl + 1, text: decoder.decode(bytes.subarray(start, nl)) });
    start = nl + 1;
  }
  return { lines: out, end: base + start };
}

/** The record lines' writer order: `seq` first, so most lines give theirs without a parse. */
const SEQ_FIRST = /^\{"seq":(\d{1,15}),/;

/**
 * The highest seq of the records in `bytes` (whole lines), -1 when none: what a reader could take from
 * them. A line in the writer's shape gives its seq at once (one that is then no record only makes the
 * answer higher, and a next seq above it is always safe); any other line is parsed as readers do.
 */
function highestSeqIn(bytes: Uint8Array): number {
  let highest = -1;
  for (const line of lines(bytes, 0).lines) {
    const fast = SEQ_FIRST.exec(line.text);
    const seq = fast !== null ? Number(fast[1]) : parseRecord(line.text)?.seq ?? -1;
    if (seq > highest) highest = seq;
  }
  return highest;
}

/**
 * Whether a record of `seq` can come next in a segment, after the record before `expected` and `damaged`
 * lines that are no record (or one out of order): the next seq itself; after damage, any later one too (a
 * damaged stretch, such as a block of zeros, can hold any number of records, and a line can be damaged
 * without hiding one). Never an earlier one: seqs are handed out once.
 */
function follows(seq: number, expected: number, damaged: number): boolean {
  return seq === expected || (damaged > 0 && seq > expected);
}

/** A record line's seq and raw offset, or null when the line is not a record. */
function parseRecord(text: string): { frame: Frame; seq: number; raw: number | null } | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null; // Torn or damaged: the caller decides (cut on recovery, skip and report on reading).
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const record = value as Record<string, unknown>;
  const seq = record.seq;
  if (typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < 0 || typeof record.type !== "string") {
    return null;
  }
  const raw = typeof record.raw === "number" && Number.isSafeInteger(record.raw) ? record.raw : null;
  delete record.raw;
  return { frame: record as unknown as Frame, seq, raw };
}

function parseHeader(text: string): LogHeader | null {
  try {
    const parsed = LogHeaderSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null; // Not JSON: a torn or foreign header.
  }
}

function readAll(path: string, from = 0): Uint8Array {
  const file = Deno.openSync(path, { read: true });
  try {
    const size = file.statSync().size;
    const out = new Uint8Array(Math.max(0, size - from));
    file.seekSync(from, Deno.SeekMode.Start);
    let done = 0;
    while (done < out.length) {
      const n = file.readSync(out.subarray(done));
      if (n === null || n === 0) break;
      done += n;
    }
    return out.subarray(0, done);
  } finally {
    file.close();
  }
}

/** Bytes a segment's header must end within. */
const HEADER_BYTES = 4096;

/**
 * A segment's header, read from its first {@link HEADER_BYTES} only; null when it is torn or no header.
 * Throws when the segment cannot be opened.
 */
function readSegmentHeader(path: string): LogHeader | null {
  const file = Deno.openSync(path, { read: true });
  try {
    const head = new Uint8Array(HEADER_BYTES);
    let done = 0;
    while (done < head.length) {
      const n = file.readSync(head.subarray(done));
      if (n === null || n === 0) break;
      done += n;
    }
    const nl = head.subarray(0, done).indexOf(NEWLINE);
    return nl < 0 ? null : parseHeader(decoder.decode(head.subarray(0, nl)));
  } finally {
    file.close();
  }
}

/** The index entries of a segment (`seq → offset`), ascending; an unreadable index is empty. */
function readIndex(path: string): { seq: number; offset: number }[] {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch {
    return []; // Missing or unreadable: the index is only a shortcut, the log is scanned instead.
  }
  const out: { seq: number; offset: number }[] = [];
  for (const line of text.split("\n")) {
    const match = /^(\d+) (\d+)$/.exec(line);
    if (match === null) continue;
    const entry = { seq: Number(match[1]), offset: Number(match[2]) };
    if (!Number.isSafeInteger(entry.seq) || !Number.isSafeInteger(entry.offset)) continue;
    const last = out.at(-1);
    if (last === undefined || (entry.seq > last.seq && entry.offset > last.offset)) out.push(entry);
  }
  return out;
}

function writeAll(file: Deno.FsFile, bytes: Uint8Array): void {
  let done = 0;
  while (done < bytes.length) done += file.writeSync(bytes.subarray(done));
}

/** Syncs a directory so that a created or removed entry survives a power loss (best effort). */
function syncDir(dir: string): void {
  try {
    const handle = Deno.openSync(dir, { read: true });
    try {
      handle.syncSync();
    } finally {
      handle.close();
    }
  } catch {
    // Some filesystems refuse fsync on a directory; the entry is still there after a clean shutdown.
  }
}

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
    const { dir } = options;
    let segments = listSegments(dir);
    let removed: string | null = null;
    // A last segment whose header is torn (the daemon died as it rolled) holds no record: it goes.
    while (segments.length > 0) {
      const last = segments.at(-1)!;
      const path = join(dir, `${segmentName(last)}.ndjson`);
      if (readSegmentHeader(path) !== null) break;
      Deno.removeSync(path);
      try {
        Deno.removeSync(join(dir, `${segmentName(last)}.idx`));
      } catch {
        // No index was written yet.
      }
      removed = segmentName(last);
      segments = segments.slice(0, -1);
    }
    if (segments.length === 0) {
      const store = new FrameStore(options, crypto.randomUUID(), { cutBytes: 0, segment: removed });
      store.#startSegment(0);
      return store;
    }
    const first = segments.at(-1)!;
    const path = join(dir, `${segmentName(first)}.ndjson`);
    const bytes = readAll(path);
    const headerEnd = bytes.indexOf(NEWLINE) + 1;
    const header = parseHeader(decoder.decode(bytes.subarray(0, headerEnd - 1)))!;
    // Scan from the last index entry that points at its record; else from the header.
    let start = headerEnd;
    // The name is what seeking goes by: a header that says an earlier seq (a segment copied or damaged)
    // must not make seqs the older segments hold be handed out again; nor may a segment named inside an
    // older one's range (copied there): no seq below the floor is taken.
    const floor = Math.max(header.first_seq, first, lastSeqHeld(dir, segments.slice(0, -1)) + 1);
    let expected = floor;
    const index = readIndex(join(dir, `${segmentName(first)}.idx`));
    for (let i = index.length - 1; i >= 0; i--) {
      const entry = index[i]!;
      if (entry.offset >= bytes.length || entry.seq < floor) continue;
      const nl = bytes.indexOf(NEWLINE, entry.offset);
      if (nl < 0) continue;
      if (parseRecord(decoder.decode(bytes.subarray(entry.offset, nl)))?.seq === entry.seq) {
        start = entry.offset;
        expected = entry.seq;
        break;
      }
    }
    let good = start;
    let lastRaw: number | null = null;
    // Only the tail after the last whole record is cut (a torn write). A damaged record with whole
    // records after it stays (reading reports and skips it): cutting there would drop frames clients saw
    // and hand their seqs out again.
    // A record is taken when its seq is the next one, or a later one after damage (see `follows`); anything
    // else (a seq out of order) counts as damage too.
    let damaged = 0;
    // A reader takes any record above the last it took (see scanLog): a seq out of order that stays in the
    // log as damage (a whole record before the cut) is still read, so it must never be handed out again.
    // The next seq is above the highest record before the cut, and that next seq is taken when it follows
    // (it is what the writer appended after such a recovery).
    // When the scan starts at an index entry, the records before it count too: a reader reads the segment
    // from its header, so a damaged seq there (above the entry's) is one it takes.
    let highest = Math.max(
      expected - 1,
      start > headerEnd ? highestSeqIn(bytes.subarray(headerEnd, start)) : -1,
    );
    let highestKept = highest;
    for (const line of lines(bytes.subarray(start), start).lines) {
      const record = parseRecord(line.text);
      const taken = record !== null && (follows(record.seq, expected, damaged) || record.seq === highest + 1);
      if (record !== null) highest = Math.max(highest, record.seq);
      if (!taken) {
        damaged++;
        continue;
      }
      expected = record.seq + 1;
      damaged = 0;
      if (record.raw !== null) lastRaw = record.raw;
      // In bytes as read: the text of a line that is not all UTF-8 is longer once encoded again.
      good = line.next;
      highestKept = highest;
    }
    // The scan started late: the raw offset may be in an earlier record of the segment or an older one.
    if (lastRaw === null) lastRaw = lastRawBefore(dir, segments, bytes.subarray(0, start), headerEnd);
    const cut = bytes.length - good;
    const store = new FrameStore(options, header.log_id, {
      cutBytes: cut,
      segment: cut > 0 ? segmentName(first) : removed,
    });
    const file = Deno.openSync(path, { read: true, write: true });
    if (cut > 0) {
      file.truncateSync(good);
      file.syncDataSync();
      rewriteIndex(join(dir, `${segmentName(first)}.idx`), index.filter((entry) => entry.offset < good));
    }
    file.seekSync(0, Deno.SeekMode.End);
    store.#file = file;
    store.#index = Deno.openSync(join(dir, `${segmentName(first)}.idx`), {
      write: true,
      append: true,
      create: true,
      mode: 0o600,
    });
    store.#segmentFirst = first;
    store.#size = good;
    store.#nextSeq = Math.max(expected, highestKept + 1);
    store.#lastRaw = lastRaw;
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

function rewriteIndex(path: string, entries: readonly { seq: number; offset: number }[]): void {
  Deno.writeTextFileSync(path, entries.map((entry) => `${entry.seq} ${entry.offset}\n`).join(""));
}

/** The last `raw` before `start` in the last segment, or in older segments (0 when none has one). */
function lastRawBefore(
  dir: string,
  segments: readonly number[],
  head: Uint8Array,
  headerEnd: number,
): number {
  const own = lines(head.subarray(headerEnd), headerEnd).lines;
  for (let i = own.length - 1; i >= 0; i--) {
    const raw = parseRecord(own[i]!.text)?.raw ?? null;
    if (raw !== null) return raw;
  }
  for (let s = segments.length - 2; s >= 0; s--) {
    const bytes = readAll(join(dir, `${segmentName(segments[s]!)}.ndjson`));
    const all = lines(bytes, 0).lines;
    for (let i = all.length - 1; i >= 1; i--) {
      const raw = parseRecord(all[i]!.text)?.raw ?? null;
      if (raw !== null) return raw;
    }
  }
  return 0;
}

/** Bytes read from the end of an older segment for its last record (the whole segment when none is there). */
const TAIL_BYTES = 64 * 1024;

/** The highest seq the last records of `segments` hold, -1 when none holds one. */
function lastSeqHeld(dir: string, segments: readonly number[]): number {
  let last = -1;
  for (const first of segments) {
    const path = join(dir, `${segmentName(first)}.ndjson`);
    const size = Deno.statSync(path).size;
    for (const from of size > TAIL_BYTES ? [size - TAIL_BYTES, 0] : [0]) {
      const all = lines(readAll(path, from), from).lines;
      let found = -1;
      for (let i = all.length - 1; i >= 0 && found < 0; i--) found = parseRecord(all[i]!.text)?.seq ?? -1;
      if (found >= 0) {
        last = Math.max(last, found);
        break;
      }
    }
  }
  return last;
}

/** How {@link readLog} reads. */
export interface ReadLogOptions {
  /** The first seq wanted (default: the oldest kept). */
  readonly from?: number;
  /** Stop after this seq (inclusive; default: the end). */
  readonly to?: number;
  /** When given, the log's id must be this (else `E_LOG_SEEK`). */
  readonly logId?: string;
  /** Told of a damaged record or segment, which is skipped (reading goes on after it). */
  readonly onCorrupt?: (error: DaemonError) => void;
  /**
   * Keep only the newest records within this many bytes of their lines; the older ones read are dropped
   * and reported to `onDropped` (an attach of a huge log sends its tail, not all of it).
   */
  readonly tailBytes?: number;
  /** Told of the records `tailBytes` dropped: the first and last seq. */
  readonly onDropped?: (from: number, to: number) => void;
  /**
   * The next seq of the log's writer ({@link FrameStore.nextSeq}): a record at or past it is damage (its
   * writer never handed that seq out), reported and skipped.
   */
  readonly before?: number;
}

/**
 * Reads a log's records from `options.from`, using the segment names and sparse indexes to start close to
 * it. Throws `E_LOG_SEEK` when `from` is older than the oldest kept frame or the log id differs.
 */
export function readLog(dir: string, options: ReadLogOptions = {}): LogRecord[] {
  return scanLog(dir, options, (line) => {
    const record = parseRecord(line);
    return record === null ? null : { seq: record.seq, item: { frame: record.frame, raw: record.raw } };
  });
}

/**
 * {@link readLog} as lines: each record's frame as the JSON text the log holds (without `raw`), for an
 * attach to send on without decoding and encoding every frame again. A line as this daemon's writer makes
 * it (`{"seq":N,…}`, `raw` last) is taken as it is: the log is the daemon's own, in its private directory,
 * and a torn write is cut when the log is opened. Any other line is parsed (and skipped when damaged).
 */
export function readLogText(dir: string, options: ReadLogOptions = {}): LogLine[] {
  return scanLog(dir, options, (line) => {
    const fast = WRITER_LINE.exec(line);
    // The writer's JSON has no raw control characters (JSON.stringify escapes them): a line with one is
    // damaged, and parsed (then skipped) like any other.
    if (fast !== null && line.endsWith("}") && !CONTROL.test(line)) {
      const seq = Number(fast[1]);
      const raw = RAW_TAIL.exec(line);
      const text = raw === null ? line : `${line.slice(0, raw.index)}}`;
      if (!text.includes('"raw":')) return { seq, item: { seq, text } };
    }
    const record = parseRecord(line);
    if (record === null) return null;
    return { seq: record.seq, item: { seq: record.seq, text: JSON.stringify(record.frame) } };
  });
}

/** Whether index `entry` points at the start of its own record in segment `path` (a few bytes are read). */
function indexHolds(path: string, entry: { seq: number; offset: number }): boolean {
  if (entry.offset < 1) return false;
  const file = Deno.openSync(path, { read: true });
  try {
    file.seekSync(entry.offset - 1, Deno.SeekMode.Start);
    const bytes = new Uint8Array(32);
    const n = file.readSync(bytes) ?? 0;
    const text = decoder.decode(bytes.subarray(0, n));
    // The line before ends there, and this one is the writer's record of that seq (`{"seq":N,` first).
    return text.startsWith(`\n{"seq":${entry.seq},`);
  } finally {
    file.close();
  }
}

/** The start of a record line as the writer makes it (`seq` first). */
const WRITER_LINE = /^\{"seq":(\d{1,15}),"/;
/** A character JSON text never holds raw. */
// deno-lint-ignore no-control-regex -- finding control characters is the point: a whole record has none.
const CONTROL = /[\u0000-\u001f]/;
/** `raw` as the writer appends it, last. */
const RAW_TAIL = /,"raw":\d{1,15}\}$/;

/**
 * The seq segment `s` holds records below: the name of the next segment whose header agrees with its name
 * (recovery hands out seqs from the last segment's name on). A segment whose header says another seq is a
 * copy or damaged, and bounds nothing; none: no bound.
 */
function nextSegmentBound(dir: string, segments: readonly number[], s: number): number {
  for (let j = s + 1; j < segments.length; j++) {
    let header: LogHeader | null;
    try {
      header = readSegmentHeader(join(dir, `${segmentName(segments[j]!)}.ndjson`));
    } catch {
      continue; // Removed since the listing (the oldest go first, so never one after this): no bound from it.
    }
    if (header?.first_seq === segments[j]) return segments[j]!;
  }
  return Number.MAX_SAFE_INTEGER;
}

/** Reads record lines as {@link readLog} says, each turned into an item by `take` (null: damaged). */
function scanLog<T>(
  dir: string,
  options: ReadLogOptions,
  take: (line: string) => { seq: number; item: T } | null,
): T[] {
  const segments = listSegments(dir);
  const from = options.from ?? 0;
  const to = options.to ?? Number.MAX_SAFE_INTEGER;
  const out: { seq: number; item: T }[] = [];
  if (segments.length === 0) return [];
  let startAt = 0;
  for (let i = 0; i < segments.length; i++) if (segments[i]! <= from) startAt = i;
  if (from < segments[0]! && options.from !== undefined) {
    throw new DaemonError(
      "E_LOG_SEEK",
      `The log no longer holds frame ${from}: it starts at ${segments[0]}`,
      {
        details: { from, oldest: segments[0]! },
      },
    );
  }
  const before = options.before ?? Number.MAX_SAFE_INTEGER;
  let last = -1;
  let held = 0;
  let dropped: { from: number; to: number } | null = null;
  const sizes: number[] = [];
  let head = 0;
  const keep = (record: { seq: number; item: T }, size: number) => {
    out.push(record);
    sizes.push(size);
    held += size;
    while (options.tailBytes !== undefined && held > options.tailBytes && out.length - head > 1) {
      const gone = out[head]!;
      held -= sizes[head]!;
      head++;
      dropped = { from: dropped?.from ?? gone.seq, to: gone.seq };
    }
  };
  for (let s = startAt; s < segments.length; s++) {
    const name = segmentName(segments[s]!);
    const nextFirst = nextSegmentBound(dir, segments, s);
    const path = join(dir, `${name}.ndjson`);
    let offset = 0;
    if (s === startAt) {
      // The last entry at or before `from` that points at its own record (the index is a shortcut, never
      // trusted over the log: an entry past the end or inside a line would skip records).
      const entries = readIndex(join(dir, `${name}.idx`)).filter((entry) => entry.seq <= from);
      for (let i = entries.length - 1; i >= 0 && offset === 0; i--) {
        if (indexHolds(path, entries[i]!)) offset = entries[i]!.offset;
      }
    }
    // Decoded once: a decode per line costs more than the line's parse.
    const text = decoder.decode(readAll(path, offset));
    let pos = 0;
    // The header is read for every segment, also when the index let reading start past it.
    let header: LogHeader | null;
    if (offset === 0) {
      const nl = text.indexOf("\n");
      header = nl < 0 ? null : parseHeader(text.slice(0, nl));
      pos = nl < 0 ? text.length : nl + 1;
    } else {
      header = readSegmentHeader(path); // Only its head: the rest was read from the index's offset.
    }
    if (header === null) {
      options.onCorrupt?.(
        new DaemonError("E_LOG_CORRUPT", `Log segment "${path}" has no valid header; it was skipped`, {
          details: { segment: path },
        }),
      );
      continue;
    }
    if (options.logId !== undefined && header.log_id !== options.logId) {
      throw new DaemonError("E_LOG_SEEK", `The log's id is "${header.log_id}", not "${options.logId}"`, {
        details: { log_id: header.log_id },
      });
    }
    for (;;) {
      const nl = text.indexOf("\n", pos);
      if (nl < 0) break; // A torn last line is no record.
      const line = text.slice(pos, nl);
      const lineAt = pos;
      pos = nl + 1;
      const record = take(line);
      // A seq not after the last one read (a line duplicated, a segment copied), one the writer never
      // handed out, or one at or past the next segment's name (the segment holds the seqs below it, and
      // recovery hands out seqs from the last segment's name on), is damage too: a reader is never given a
      // seq twice, nor out of order, nor one a record appended later may have.
      if (record === null || record.seq <= last || record.seq >= Math.min(before, nextFirst)) {
        // One damaged record: reported and skipped; the records after it are whole lines of their own.
        const at = offset + encoder.encode(text.slice(0, lineAt)).length;
        options.onCorrupt?.(
          new DaemonError("E_LOG_CORRUPT", `Log segment "${path}" is damaged at byte ${at}`, {
            details: { segment: path, offset: at },
          }),
        );
        continue;
      }
      last = record.seq;
      if (record.seq < from) continue;
      if (record.seq > to) break;
      keep(record, line.length);
    }
    if ((out.at(-1)?.seq ?? -1) >= to) break;
  }
  const kept = head === 0 ? out : out.slice(head);
  if (dropped !== null) {
    options.onDropped?.((dropped as { from: number }).from, (dropped as { to: number }).to);
  }
  return kept.map((record) => record.item);
}
