/**
 * Where an agent session's frames are kept for `read_output`: every frame, in `seq` order, within a budget
 * that can only drop the oldest. The session's frame log in memory keeps only its first 64 KiB and its
 * last MiB; an output log (on disk: `specter agent` keeps one per session in the daemon's segmented
 * frame-log format) is what lets an agent page through every byte of a 4 MB build log.
 *
 * The agent tools only append and read; the host that makes the logs owns their files and budgets.
 *
 * @module
 */
import type { Frame } from "../protocol/mod.ts";

/** One session's kept frames. */
export interface OutputLog {
  /** Keeps `frame` (called with every frame of the session, in `seq` order). Throws when it cannot. */
  append(frame: Frame): void;
  /**
   * The oldest `seq` still held: a budget dropped the frames before it (0 while nothing was dropped). A
   * range that starts before it is reported as dropped, never shown as if it were whole.
   */
  oldest(): number;
  /** The frames `from`…`to` (inclusive) that are held, in order; at most `limit` of them. */
  read(from: number, to: number, limit: number): Frame[];
  /** The session ended: nothing more is appended (what is held stays readable). */
  close(): void;
  /** The session is forgotten (closed, pruned, or the tools closed): its frames go. */
  remove(): void;
}

/**
 * Opens the output log of a new session: `id` is the tools' session id, `artifacts` the session's audit
 * directory when it has one (the log lives there, out of the sandbox's reach). Null: none is kept (the
 * session's memory window serves `read_output`).
 */
export type OutputLogFactory = (id: string, artifacts: string | undefined) => OutputLog | null;
