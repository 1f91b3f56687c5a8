/**
 * The screen a parsed view describes, rebuilt from its events: what a client (an SDK, a test) holds after
 * reading a `screen` and the `rows` diffs that followed it.
 *
 * @module
 */
import type { ViewEvent } from "../protocol/mod.ts";

/**
 * The rows of the last screen `events` describe (trailing empty rows trimmed, as the view sends them), or
 * null when they describe none. Text, line updates and prompts leave the screen as it is.
 */
export function screenOf(events: Iterable<ViewEvent>): string[] | null {
  let screen: string[] | null = null;
  for (const event of events) {
    if (event.type === "screen") screen = [...event.rows];
    else if (event.type === "rows") {
      const rows: string[] = (screen ?? []).slice(event.scrolled ?? 0);
      for (const { row, text } of event.rows) {
        while (rows.length < row) rows.push("");
        rows[row - 1] = text;
      }
      while (rows.length > 0 && rows[rows.length - 1] === "") rows.pop();
      screen = rows;
    }
  }
  return screen;
}
