/**
 * Recovery of a frame log on open: the last segment is scanned (from the last index entry that points at
 * its record), a torn tail is cut and synced, a segment whose header is torn goes, and the next seq and
 * output offset the writer continues from are found. What was repaired is reported as a {@link Recovery}.
 *
 * @module
 */
import { join } from "node:path";
import { decoder, lines, NEWLINE, parseHeader, parseRecord } from "./_log_lines.ts";
import {
  listSegments,
  readAll,
  readIndex,
  readSegmentHeader,
  rewriteIndex,
  segmentName,
} from "./log_segments.ts";

/** What `FrameStore.open` found and repaired. */
export interface Recovery {
  /** Bytes cut from the end of the last segment (a torn or invalid tail); 0 when it was whole. */
  readonly cutBytes: number;
  /** The segment that was cut, or whose torn header made it be removed; null when nothing was. */
  readonly segment: string | null;
}

/** The last segment, opened for the writer to go on appending to it. */
export interface RecoveredTail {
  /** The segment, positioned at its end. */
  readonly file: Deno.FsFile;
  /** Its index, opened for appending. */
  readonly index: Deno.FsFile;
  readonly segmentFirst: number;
  /** Bytes of the segment after the cut. */
  readonly size: number;
  readonly nextSeq: number;
  readonly lastRaw: number;
}

/** A log directory as recovery left it: its id, what was repaired, and its last segment (null: none). */
export interface RecoveredLog {
  /** The log's id; a new one when the directory held no segment. */
  readonly logId: string;
  readonly recovery: Recovery;
  readonly tail: RecoveredTail | null;
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

/**
 * Recovers the log in `dir` (which exists): removes a last segment whose header is torn, cuts a torn
 * tail, and opens the last segment for appending. Throws when a file cannot be read, cut or opened.
 */
export function recoverLog(dir: string): RecoveredLog {
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
    return { logId: crypto.randomUUID(), recovery: { cutBytes: 0, segment: removed }, tail: null };
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
  const recovery = { cutBytes: cut, segment: cut > 0 ? segmentName(first) : removed };
  const file = Deno.openSync(path, { read: true, write: true });
  if (cut > 0) {
    file.truncateSync(good);
    file.syncDataSync();
    rewriteIndex(join(dir, `${segmentName(first)}.idx`), index.filter((entry) => entry.offset < good));
  }
  file.seekSync(0, Deno.SeekMode.End);
  const indexFile = Deno.openSync(join(dir, `${segmentName(first)}.idx`), {
    write: true,
    append: true,
    create: true,
    mode: 0o600,
  });
  return {
    logId: header.log_id,
    recovery,
    tail: {
      file,
      index: indexFile,
      segmentFirst: first,
      size: good,
      nextSeq: Math.max(expected, highestKept + 1),
      lastRaw,
    },
  };
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
