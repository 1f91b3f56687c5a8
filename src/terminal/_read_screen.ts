/**
 * Reading a screen out of xterm: its lines, cursor and modes as a {@link ScreenSnapshot}, and the styled
 * runs of each line's cells when asked for.
 *
 * @module
 */
import type { IBufferCell, IBufferLine, Terminal } from "@xterm/headless";
import type { CellRun, Color, ScreenSnapshot } from "../protocol/mod.ts";
import type { SnapshotOptions } from "./snapshot.ts";
import { cursorHidden } from "./_xterm_core.ts";

/** The screen of `term` as parsed so far, with `title` and `partial` as the model knows them. */
export function readScreen(
  term: Terminal,
  options: SnapshotOptions,
  title: string,
  partial: boolean,
): ScreenSnapshot {
  const buffer = term.buffer.active;
  const top = buffer.baseY;
  const lines: string[] = [];
  const cells: CellRun[][] = [];
  const cell = buffer.getNullCell();
  for (let y = 0; y < term.rows; y++) {
    const line = buffer.getLine(top + y);
    // Only spaces are blanks: other white space (NBSP, ideographic space) was printed on purpose.
    lines.push(line === undefined ? "" : line.translateToString(true).replace(/ +$/, ""));
    if (options.cells) cells.push(line === undefined ? [] : runsOf(line, term.cols, cell));
  }
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  while (cells.length > 0 && cells[cells.length - 1]!.length === 0) cells.pop();
  return {
    cols: term.cols,
    rows: term.rows,
    cursor: {
      // xterm parks the cursor one past the last column until the next character wraps (pending wrap).
      x: Math.min(buffer.cursorX, term.cols - 1),
      y: buffer.cursorY,
      visible: !cursorHidden(term),
    },
    alt_screen: buffer.type === "alternate",
    title,
    partial,
    lines,
    ...(options.cells ? { cells } : {}),
  };
}

function colorOf(isDefault: boolean, isRgb: boolean, value: number): Color | undefined {
  if (isDefault) return undefined;
  return isRgb ? `#${value.toString(16).padStart(6, "0")}` : value;
}

/** The styled runs of one line, up to its last non-blank or styled cell. */
function runsOf(line: IBufferLine, cols: number, cell: IBufferCell): CellRun[] {
  let end = 0;
  for (let x = 0; x < cols; x++) {
    line.getCell(x, cell);
    const chars = cell.getChars();
    if ((chars !== "" && chars !== " ") || !cell.isAttributeDefault()) end = x + 1;
  }
  const runs: CellRun[] = [];
  let key = "";
  for (let x = 0; x < end; x++) {
    line.getCell(x, cell);
    if (cell.getWidth() === 0) continue; // The second half of a wide character.
    const run = styleOf(cell);
    const next = JSON.stringify(run);
    const text = cell.getChars() || " ";
    const last = runs[runs.length - 1];
    if (last !== undefined && next === key) {
      last.text += text;
    } else {
      runs.push({ text, ...run });
      key = next;
    }
  }
  return runs;
}

/** The attributes of a cell, with defaults left out (the compact form of a {@link CellRun}). */
function styleOf(cell: IBufferCell): Omit<CellRun, "text"> {
  const fg = colorOf(cell.isFgDefault(), cell.isFgRGB(), cell.getFgColor());
  const bg = colorOf(cell.isBgDefault(), cell.isBgRGB(), cell.getBgColor());
  return {
    ...(fg === undefined ? {} : { fg }),
    ...(bg === undefined ? {} : { bg }),
    ...(cell.isBold() ? { bold: true } : {}),
    ...(cell.isDim() ? { dim: true } : {}),
    ...(cell.isItalic() ? { italic: true } : {}),
    ...(cell.isUnderline() ? { underline: true } : {}),
    ...(cell.isInverse() ? { inverse: true } : {}),
  } as const;
}
