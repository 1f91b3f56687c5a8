/**
 * Agent sessions' output logs on disk: each session's frames in a {@link FrameStore} (the daemon's
 * segmented, crash-safe frame log with sparse indexes), so that `read_output` pages through every byte a
 * program printed while the agent process holds only a page.
 *
 * Two budgets bound the disk: one per session (the store drops its oldest whole segments past it) and one
 * for all of them (past it, the oldest segments of any session go, by last write). A session's segment
 * being written is never dropped, so the total can pass its budget by at most one segment per session.
 * What is dropped is reported by `read_output` (`dropped`), never shown as if it were whole.
 *
 * @module
 */
import { join } from "node:path";
import type { OutputLog } from "../agent/mod.ts";
import type { Frame } from "../protocol/mod.ts";
import { FrameStore, listSegments, readLog } from "./frame_store.ts";

/** Default disk budget of one session's output log. */
export const DEFAULT_SESSION_LOG_BYTES = 256 * 1024 * 1024;
/** Default disk budget of all the output logs of one agent process. */
export const DEFAULT_TOTAL_LOG_BYTES = 1024 * 1024 * 1024;
/**
 * Segment size of an output log: a page is read from the index entry before it to the end of its
 * segment, so a segment is what one read may hold in memory (and the unit budgets drop).
 */
export const OUTPUT_LOG_SEGMENT_BYTES = 1024 * 1024;
/** Index entries every this many bytes of records: a page read starts at most this far before its frame. */
const INDEX_EVERY = 16 * 1024;
/**
 * How the daemon shapes an agent session's durable frame log: `read_output` pages through it, and a page
 * reads from an index entry to the end of its segment (16 MiB for other sessions).
 */
export const AGENT_LOG_SHAPE = { segmentBytes: OUTPUT_LOG_SEGMENT_BYTES, indexEvery: INDEX_EVERY } as const;

/** Budgets of {@link AgentOutputLogs}. */
export interface OutputLogBudgets {
  /** One session's log (default {@link DEFAULT_SESSION_LOG_BYTES}). */
  readonly sessionBytes?: number;
  /** All the logs together (default {@link DEFAULT_TOTAL_LOG_BYTES}). */
  readonly totalBytes?: number;
  /** Segment size (default {@link OUTPUT_LOG_SEGMENT_BYTES}). */
  readonly segmentBytes?: number;
}

/** The output logs of one agent process (one `specter agent`, or one set of agent tools). */
export class AgentOutputLogs {
  readonly #logs = new Set<DiskOutputLog>();
  readonly #sessionBytes: number;
  readonly #totalBytes: number;
  readonly #segmentBytes: number;
  /**
   * At most what the logs hold: the last measured total plus what was appended since (the stores' own
   * budgets and removed logs only make it less; indexes add a few per cent). Below the total budget,
   * nothing is measured.
   */
  #upTo = 0;

  constructor(budgets: OutputLogBudgets = {}) {
    this.#segmentBytes = budgets.segmentBytes ?? OUTPUT_LOG_SEGMENT_BYTES;
    this.#sessionBytes = budgets.sessionBytes ?? DEFAULT_SESSION_LOG_BYTES;
    this.#totalBytes = budgets.totalBytes ?? DEFAULT_TOTAL_LOG_BYTES;
  }

  /**
   * Opens a new session's log in `dir` (created 0700; a log already there is recovered and appended to,
   * as a {@link FrameStore} is). Throws `E_LOG_WRITE` when it cannot be created.
   */
  open(dir: string, session: string): OutputLog {
    const store = FrameStore.open({
      dir,
      session,
      segmentBytes: this.#segmentBytes,
      maxBytes: this.#sessionBytes,
      indexEvery: INDEX_EVERY,
    });
    const log = new DiskOutputLog(dir, store, {
      appended: (bytes) => this.#appended(bytes),
      gone: (gone) => this.#logs.delete(gone),
    });
    this.#logs.add(log);
    return log;
  }

  /** Bytes the logs hold on disk now (their segments and indexes). */
  bytes(): number {
    let total = 0;
    for (const log of this.#logs) for (const file of log.files()) total += file.size;
    return total;
  }

  #appended(bytes: number): void {
    this.#upTo += bytes;
    // Measured (a stat per segment) only once the appends since the last measure may pass the budget:
    // appends stay cheap below it, and the budget holds to the segments being written.
    if (this.#upTo <= this.#totalBytes) return;
    this.enforce();
  }

  /** Drops the oldest segments (by last write) of any log while the logs hold more than the total budget. */
  enforce(): void {
    const droppable: { log: DiskOutputLog; first: number; size: number; mtime: number }[] = [];
    let total = 0;
    for (const log of this.#logs) {
      const files = log.files();
      for (const file of files) {
        total += file.size;
        if (file.droppable) droppable.push({ log, first: file.first, size: file.size, mtime: file.mtime });
      }
    }
    droppable.sort((a, b) => a.mtime - b.mtime || a.first - b.first);
    for (const segment of droppable) {
      if (total <= this.#totalBytes) break;
      total -= segment.log.drop(segment.first);
    }
    this.#upTo = total;
  }
}

/** One file of a log as the budget sees it. */
interface LogFile {
  readonly first: number;
  readonly size: number;
  readonly mtime: number;
  /** Not the segment being written. */
  readonly droppable: boolean;
}

function segmentPath(dir: string, first: number, ext: "ndjson" | "idx"): string {
  return join(dir, `${String(first).padStart(20, "0")}.${ext}`);
}

class DiskOutputLog implements OutputLog {
  readonly #dir: string;
  #store: FrameStore | null;
  readonly #owner: { appended(bytes: number): void; gone(log: DiskOutputLog): void };

  constructor(
    dir: string,
    store: FrameStore,
    owner: { appended(bytes: number): void; gone(log: DiskOutputLog): void },
  ) {
    this.#dir = dir;
    this.#store = store;
    this.#owner = owner;
  }

  append(frame: Frame): void {
    if (this.#store === null) return; // Closed: the session's last frames came after its exit was kept.
    const segment = this.#store.segmentFirst;
    const before = this.#store.segmentSize;
    this.#store.append(frame);
    const after = this.#store.segmentSize;
    // What the record took on disk. After a roll the new segment (its header and this record) counts whole,
    // even when it is larger than the full one before it (a record larger than a segment).
    this.#owner.appended(this.#store.segmentFirst === segment ? after - before : after);
  }

  oldest(): number {
    return listSegments(this.#dir)[0] ?? 0;
  }

  read(from: number, to: number, limit: number): Frame[] {
    const start = Math.max(from, this.oldest());
    if (limit < 1 || start > to) return [];
    return readLog(this.#dir, {
      from: start,
      to: Math.min(to, start + limit - 1),
      ...(this.#store === null ? {} : { before: this.#store.nextSeq }),
    }).map((record) => record.frame);
  }

  close(): void {
    this.#store?.close();
    this.#store = null;
  }

  remove(): void {
    this.close();
    this.#owner.gone(this);
    try {
      Deno.removeSync(this.#dir, { recursive: true });
    } catch (error: unknown) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }

  /** The log's segments, oldest first, with their index's size counted in. */
  files(): LogFile[] {
    const segments = listSegments(this.#dir);
    const out: LogFile[] = [];
    for (const [i, first] of segments.entries()) {
      let size = 0;
      let mtime = 0;
      for (const ext of ["ndjson", "idx"] as const) {
        try {
          const stat = Deno.statSync(segmentPath(this.#dir, first, ext));
          size += stat.size;
          if (ext === "ndjson") mtime = stat.mtime?.getTime() ?? 0;
        } catch {
          // An index may never have been written; a segment removed since the listing counts nothing.
        }
      }
      out.push({ first, size, mtime, droppable: i < segments.length - 1 });
    }
    return out;
  }

  /** Removes segment `first` (never the last one); the bytes it freed. */
  drop(first: number): number {
    let freed = 0;
    for (const ext of ["ndjson", "idx"] as const) {
      const path = segmentPath(this.#dir, first, ext);
      try {
        freed += Deno.statSync(path).size;
        Deno.removeSync(path);
      } catch {
        // Already gone (the store's own budget dropped it): nothing freed here.
      }
    }
    return freed;
  }
}

/**
 * An agent session's output log when the daemon runs it: the session's own durable frame log (written
 * before a frame reaches any reader, within the daemon's per-session budget), read where the daemon keeps
 * it. `loggedTo` is the last seq that log holds: a frame past it was not logged (logging failed), and the
 * agent tools then read the rest from memory. The files are the daemon's: removing is its business.
 */
export function sessionOutputLog(dir: string, loggedTo: () => number): OutputLog {
  return {
    append(frame: Frame): void {
      if (frame.seq > loggedTo()) {
        throw new Error(`The daemon's frame log of this session stops at frame ${loggedTo()}`);
      }
    },
    oldest: () => listSegments(dir)[0] ?? 0,
    read(from: number, to: number, limit: number): Frame[] {
      const start = Math.max(from, listSegments(dir)[0] ?? 0);
      const last = Math.min(to, start + limit - 1, loggedTo());
      if (limit < 1 || start > last) return [];
      return readLog(dir, { from: start, to: last, before: loggedTo() + 1 }).map((record) => record.frame);
    },
    close(): void {
      // The daemon closes its store when the session ends.
    },
    remove(): void {
      // The daemon's session keeps its log until it is purged.
    },
  };
}
