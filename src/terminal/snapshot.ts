/**
 * The stable text serialization of a `ScreenSnapshot` (its schema is in `protocol/`), for golden files.
 *
 * This module does not load the terminal emulator: the CLI and every session import it.
 *
 * @module
 */
import type { ScreenSnapshot } from "../protocol/mod.ts";

/** What a snapshot should contain beyond the text. */
export interface SnapshotOptions {
  /** Include per-cell attributes (`cells`). Default false. */
  readonly cells?: boolean;
  /**
   * Wait at most this long (ms) for the terminal model to catch up with the output read so far; then the
   * screen as parsed by that time, `partial: true` (it may lack the newest output). Default: wait until
   * everything read is parsed (bounded by the model's watermarks, ~0.2 s of parsing on a quiet machine).
   * For callers with a deadline: the clock wins over parsing work.
   */
  readonly waitMs?: number;
}

/**
 * The stable text form of a snapshot, for goldens: one header line, then `lines` one per line, every line
 * ending in `\n`. Identical snapshots give byte-identical text.
 *
 * ```text
 * # 80x24 cursor 3,5 visible alt=false title="vim: notes.txt"
 * first line
 * second line
 * ```
 *
 * The header holds `COLSxROWS`, the cursor as `x,y` (0-based column, row), `visible` or `hidden`,
 * `alt=true|false`, the title as a JSON string, and ` partial` at the end only when the snapshot is
 * partial. Cell attributes are not part of the text form (use the JSON form).
 */
export function snapshotText(snapshot: ScreenSnapshot): string {
  const { cols, rows, cursor } = snapshot;
  const header = `# ${cols}x${rows} cursor ${cursor.x},${cursor.y} ${cursor.visible ? "visible" : "hidden"}` +
    ` alt=${snapshot.alt_screen} title=${JSON.stringify(snapshot.title)}${
      snapshot.partial ? " partial" : ""
    }`;
  return [header, ...snapshot.lines].map((line) => line + "\n").join("");
}
