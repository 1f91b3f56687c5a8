/**
 * The replay page's progress while it loads a session's log: frames arrive one notification at a time,
 * and a long log takes seconds; without a word the page looks broken until the player appears.
 *
 * @module
 */

/** What has arrived: frames received, and the seq the log ends before once the daemon said it. */
export interface LoadProgress {
  /** Frames received so far. */
  readonly received: number;
  /** The highest seq received, -1 before any. */
  readonly lastSeq: number;
  /** The log's `next_seq` (frames 0 … until-1 are the history), or null before the attach answer. */
  readonly until: number | null;
}

/** The status line: `Loading the log: 1,234 of 5,000 frames (24%)`, or the count before the total is known. */
export function progressText(progress: LoadProgress): string {
  const count = progress.received.toLocaleString("en");
  if (progress.until === null || progress.until <= 0) return `Loading the log: ${count} frames`;
  // By seq: a log whose oldest frames were rotated away starts above 0, and live frames go past the end.
  const done = Math.min(Math.max(progress.lastSeq + 1, 0), progress.until);
  const percent = Math.floor((100 * done) / progress.until);
  return `Loading the log: ${done.toLocaleString("en")} of ${
    progress.until.toLocaleString("en")
  } frames (${percent}%)`;
}
