/**
 * What a watcher of `specter attach` shows: the session's screen (from a terminal model of the session's
 * size) drawn into the watcher's own window, clipped or padded as tmux does for a smaller or larger
 * client, with a status line at the bottom. The session's raw output was drawn for the session's size: in
 * a window of another size it wraps and scrolls into garbage, so a watcher never passes it on.
 *
 * Only this module's own sequences reach the terminal (cursor moves, SGR, erase), and the cells' text is
 * stripped of anything unprintable. Autowrap is off while watching ({@link VIEW_ENTER}), so a line that
 * came out wider than counted is cut by the terminal rather than wrapped.
 *
 * @module
 */
import type { CellRun, Color, ScreenSnapshot } from "../protocol/mod.ts";
import { stripUnprintable } from "../terminal/mod.ts";

/** Enters the watcher's view: the alternate screen (as tmux does), no autowrap, cursor hidden. */
export const VIEW_ENTER = "\x1b[?1049h\x1b[?7l\x1b[?25l\x1b[H\x1b[2J";
/** Leaves it: autowrap and cursor back, the normal screen as the person left it. */
export const VIEW_LEAVE = "\x1b[0m\x1b[?7h\x1b[?25h\x1b[?1049l";

/** A window's size, in cells. */
export interface WindowSize {
  readonly cols: number;
  readonly rows: number;
}

/** Columns a character takes: 2 for East Asian wide and emoji, else 1 (an estimate; see the module doc). */
export function charWidth(code: number): number {
  if (code < 0x1100) return 1;
  const wide = (code <= 0x115f) || (code >= 0x2e80 && code <= 0xa4cf && code !== 0x303f) ||
    (code >= 0xac00 && code <= 0xd7a3) || (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) || (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) || (code >= 0x1f300 && code <= 0x1faff) ||
    (code >= 0x20000 && code <= 0x3fffd);
  return wide ? 2 : 1;
}

function colour(base: number, value: Color | undefined): string {
  if (value === undefined) return "";
  if (typeof value === "number") return `;${base};5;${value}`;
  const n = parseInt(value.slice(1), 16);
  return `;${base};2;${(n >> 16) & 255};${(n >> 8) & 255};${n & 255}`;
}

/** The SGR sequence of a run's style (always from a reset: `0` first). */
function sgrOf(run: CellRun): string {
  return `\x1b[0${run.bold ? ";1" : ""}${run.dim ? ";2" : ""}${run.italic ? ";3" : ""}` +
    `${run.underline ? ";4" : ""}${run.inverse ? ";7" : ""}${colour(38, run.fg)}${colour(48, run.bg)}m`;
}

/** Columns `from` to `from + width` of a line of runs, styled. */
export function clipLine(runs: readonly CellRun[], from: number, width: number): string {
  let out = "";
  let x = 0;
  const end = from + width;
  for (const run of runs) {
    let text = "";
    for (const ch of stripUnprintable(run.text)) {
      const w = charWidth(ch.codePointAt(0)!);
      // A wide character cut by an edge of the view shows as a blank, as tmux draws it.
      if (x >= from && x + w <= end) text += ch;
      else if (x < end && x + w > from) text += " ".repeat(Math.min(x + w, end) - Math.max(x, from));
      x += w;
      if (x >= end) break;
    }
    if (text !== "") out += sgrOf(run) + text;
    if (x >= end) break;
  }
  return out + (out === "" ? "" : "\x1b[0m");
}

/** Where a view of `size` cells starts on a screen of `total` so that `cursor` stays in it. */
function offsetOf(cursor: number, size: number, total: number): number {
  if (total <= size) return 0;
  return Math.max(0, Math.min(cursor - size + 1, total - size));
}

/** Draws snapshots into a window, rewriting only the rows that changed since the last frame. */
export class ViewPainter {
  #rows: string[] = [];
  #size = "";

  /** Forgets what is on the screen: the next frame redraws every row (after a resize). */
  invalidate(): void {
    this.#rows = [];
    this.#size = "";
  }

  /** The bytes that bring the window from the last frame to `snapshot` with `status` on its last row. */
  paint(snapshot: ScreenSnapshot, window: WindowSize, status: string): string {
    const cols = Math.max(window.cols, 1);
    const rows = Math.max(window.rows - 1, 1);
    const key = `${cols}x${window.rows}`;
    let out = "\x1b[?2026h\x1b[?25l";
    if (key !== this.#size) {
      this.#rows = [];
      this.#size = key;
      out += "\x1b[0m\x1b[2J";
    }
    const left = offsetOf(snapshot.cursor.x, cols, snapshot.cols);
    const top = offsetOf(snapshot.cursor.y, rows, snapshot.rows);
    const width = Math.min(cols, snapshot.cols - left);
    const next: string[] = [];
    for (let r = 0; r < rows; r++) {
      const y = top + r;
      // Rows past the session's bottom stay empty, as do columns past its right edge.
      const line = y < snapshot.rows ? clipLine(snapshot.cells?.[y] ?? [], left, width) : "";
      next.push(line);
    }
    const bar = clipLine([{ text: status.padEnd(cols), inverse: true }], 0, cols);
    next.push(bar);
    for (let r = 0; r < next.length; r++) {
      if (this.#rows[r] === next[r]) continue;
      // Erased first, then written: with autowrap off, an erase after a full row would take its last cell.
      out += `\x1b[${r + 1};1H\x1b[0m\x1b[2K${next[r]}`;
    }
    this.#rows = next;
    const cx = snapshot.cursor.x - left;
    const cy = snapshot.cursor.y - top;
    if (snapshot.cursor.visible && cx >= 0 && cx < cols && cy >= 0 && cy < rows) {
      out += `\x1b[${cy + 1};${cx + 1}H\x1b[?25h`;
    }
    return out + "\x1b[?2026l";
  }
}
