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
