/**
 * Reading a frame log: its records from a seq on (or their lines, sent on as the log holds them), using the
 * segment names and sparse indexes to start close to it; a damaged record or segment is reported and
 * skipped, never given to a reader twice or out of order.
 *
 * @module
 */
import { join } from "node:path";
import { DaemonError } from "../errors.ts";
import type { Frame, LogHeader } from "../protocol/mod.ts";
import { decoder, encoder, parseHeader, parseRecord } from "./_log_lines.ts";
import {
  indexHolds,
  listSegments,
  readAll,
  readIndex,
  readSegmentHeader,
  segmentName,
} from "./log_segments.ts";

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
   * The next seq of the log's writer (`FrameStore.nextSeq`): a record at or past it is damage (its
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
