/**
 * View events as the plain text an agent reads (`specter view --text`, the agent tools' `output`).
 *
 * Text is as it came; a screen is its rows under a one-line header; changed rows are `row N: text` (after `[screen scrolled up N rows]` when it scrolled); a
 * pager prompt is one bracketed line. Line updates are transient (the final state of a progress line
 * reaches the text once the line ends): only the last update of each row that no later text finished is
 * shown, at the end, as `[progress] …`.
 *
 * @module
 */
import type { ViewEvent } from "../protocol/mod.ts";

/** The text of `events` (see the module documentation). */
export function renderText(events: readonly ViewEvent[]): string {
  // Pieces joined once at the end: appending to one growing string and asking how it ends would copy it
  // again for every line (quadratic in a megabyte of rows).
  const pieces: string[] = [];
  let endsWithNewline = true;
  const add = (text: string) => {
    if (text === "") return;
    pieces.push(text);
    endsWithNewline = text.endsWith("\n");
  };
  const line = (text: string) => {
    if (!endsWithNewline) add("\n");
    add(text + "\n");
  };
  const updates = new Map<string, string>();
  for (const event of events) {
    switch (event.type) {
      case "text":
        add(event.data);
        updates.delete("cursor"); // The line being redrawn ended (or moved on).
        break;
      case "line_update": {
        const key = event.row === undefined ? "cursor" : `row ${event.row}`;
        // An empty status row is one the program took away (its progress is over).
        if (event.data === "" && event.row !== undefined) updates.delete(key);
        else updates.set(key, event.data);
        break;
      }
      case "screen":
        line(`[screen${event.alternate ? ", alternate" : ""}]`);
        for (const row of event.rows) line(row);
        break;
      case "rows":
        if (event.scrolled !== undefined) {
          line(`[screen scrolled up ${event.scrolled} row${event.scrolled === 1 ? "" : "s"}]`);
        }
        for (const { row, text } of event.rows) line(`row ${row}: ${text}`);
        break;
      case "prompt":
        line(`[pager prompt: ${event.text}]`);
        break;
      default: {
        const never: never = event;
        throw new Error(`Unknown view event ${JSON.stringify(never)}`);
      }
    }
  }
  for (const text of updates.values()) line(`[progress] ${text}`);
  return pieces.join("");
}
