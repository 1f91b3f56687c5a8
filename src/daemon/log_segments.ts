/**
 * The files of a frame log directory: segment names and their listing, whole and partial reads, a
 * segment's header, the sparse index files (`<first seq>.idx`), and the writes and syncs the writer makes.
 * Shared by the log's writer (`FrameStore`), its recovery and its readers.
 *
 * @module
 */
import { DaemonError } from "../errors.ts";
import type { LogHeader } from "../protocol/mod.ts";
import { decoder, NEWLINE, parseHeader } from "./_log_lines.ts";

/** A segment's file name (without its extension): its first seq, 20 digits. */
export function segmentName(firstSeq: number): string {
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

/** The bytes of `path` from offset `from` to its end. */
export function readAll(path: string, from = 0): Uint8Array {
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
export function readSegmentHeader(path: string): LogHeader | null {
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
export function readIndex(path: string): { seq: number; offset: number }[] {
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

/** Replaces a segment's index with `entries` (after recovery cut the records some of them pointed at). */
export function rewriteIndex(path: string, entries: readonly { seq: number; offset: number }[]): void {
  Deno.writeTextFileSync(path, entries.map((entry) => `${entry.seq} ${entry.offset}\n`).join(""));
}

/** Whether index `entry` points at the start of its own record in segment `path` (a few bytes are read). */
export function indexHolds(path: string, entry: { seq: number; offset: number }): boolean {
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

/** Writes all of `bytes` to `file`. */
export function writeAll(file: Deno.FsFile, bytes: Uint8Array): void {
  let done = 0;
  while (done < bytes.length) done += file.writeSync(bytes.subarray(done));
}

/** Syncs a directory so that a created or removed entry survives a power loss (best effort). */
export function syncDir(dir: string): void {
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
