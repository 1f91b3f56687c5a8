/**
 * The compact view: a program's output as an agent needs it, in as few tokens as the meaning allows.
 *
 * - Styling and control sequences are gone; each line is what a terminal leaves on it once it ends.
 * - A line redrawn in place (a progress bar, a spinner) reaches the text once, in its final state; while it
 *   is redrawn, a flush reports its current state as a `line_update` (one per flush, not one per redraw).
 * - A status row drawn away from the cursor (apt's `Progress: [ 40%]`) is a `line_update` with its row;
 *   when the program resets its scroll region (apt is done) a row that was reported gets a `line_update`
 *   with empty `data`: the row is gone.
 * - A line repeated verbatim is written once, then `[previous line repeated N more times]`; runs of blank
 *   lines become one.
 * - Text comes in chunks of at most {@link CHUNK_BYTES} bytes, cut at line ends where it can be.
 *
 * The view is pure: it takes output text and is told when to flush (on a pause of the program, when a
 * consumer asks, at the end), so it can run live on a session or offline over a recording.
 *
 * @module
 */
import type { ViewEvent } from "../protocol/mod.ts";
import { LineScreen } from "./_line_screen.ts";

/** Largest text chunk a flush emits. */
export const CHUNK_BYTES = 512;

/** How a flush treats the unfinished line. */
export interface FlushOptions {
  /**
   * The program paused (or the consumer needs what there is): an unfinished line that is not being redrawn
   * goes out as text (a shell prompt, `Password:`). Otherwise it waits for its end.
   */
  readonly partial?: boolean;
  /**
   * The time of the flush in seconds on the caller's clock (a recording's time, offline); the parsed view
   * paces repaints of a screen that never stops changing with it. Default: `performance.now()`.
   */
  readonly now?: number;
}

/** Recognises a pager's prompt on a line (`--More--`, `--More--(42%)`, `(END)`, `:`, `lines 1-20`). */
export const PAGER_PROMPT: RegExp =
  /^\s*(?:-- ?More ?--(?:\s*\(\d+%\))?|\(END\)|:|lines \d+-\d+(?:\/\d+)?(?: \d+%)?(?: \(END\))?|Press RETURN to continue.*|<MORE>)\s*$/;

/** Turns raw output into compact events (see the module documentation). */
export class CompactView {
  readonly #screen: LineScreen;
  #out = "";
  #last: string | null = null;
  #repeats = 0;
  #blank = false;
  #redrawn = false;
  /** The part of the open line already emitted as text (at a pause). */
  #openEmitted = "";
  readonly #status = new Map<number, string>();
  /** Status rows reported and not cleared since (a bounded number: rows are capped). */
  readonly #statusSent = new Set<number>();
  /** The text last sent for each screen row of a full-screen program (see {@link #line}). */
  readonly #rows = new Map<number, string>();
  readonly #events: ViewEvent[] = [];
  readonly #onScreen: ((alternate: boolean | null, at: number) => void) | null;

  /**
   * `onScreen` hears full-screen signs (the parsed view switches on them), with where the sign ends in the
   * text being pushed.
   */
  constructor(onScreen: ((alternate: boolean | null, at: number) => void) | null = null) {
    this.#onScreen = onScreen;
    this.#screen = new LineScreen({
      line: (text, row) => this.#line(text, row),
      status: (row, text) => {
        if (text !== "" && this.#status.get(row) !== text) this.#status.set(row, text);
      },
      statusEnd: () => {
        this.#status.clear();
        for (const row of this.#statusSent) this.#status.set(row, "");
      },
      erased: (row) => {
        if (row === undefined) this.#rows.clear();
        else for (const key of this.#rows.keys()) if (key >= row) this.#rows.delete(key);
      },
      redraw: () => this.#redrawn = true,
      screen: (alternate, at) => {
        if (alternate === false) this.#rows.clear(); // Line output again.
        this.#onScreen?.(alternate, at);
      },
    });
  }

  /** The unfinished line as drawn now. */
  get openLine(): string {
    return this.#screen.openLine;
  }

  /** Takes output text (escape sequences may be split across calls). */
  push(text: string): void {
    this.#screen.push(text);
  }

  /** Events for everything taken so far (see {@link FlushOptions}). */
  flush(options: FlushOptions = {}): ViewEvent[] {
    this.#screen.release();
    this.#endRepeats();
    const open = this.#screen.openLine;
    if (this.#redrawn && open !== "") this.#events.push({ type: "line_update", data: open });
    else if (options.partial && open !== "" && open.startsWith(this.#openEmitted)) {
      if (PAGER_PROMPT.test(open)) this.#events.push({ type: "prompt", kind: "pager", text: open.trim() });
      else {
        this.#out += open.slice(this.#openEmitted.length);
        this.#openEmitted = open;
      }
    }
    this.#redrawn = false;
    return this.#take();
  }

  /** The end of the output: the unfinished line is finished, everything goes out. */
  end(): ViewEvent[] {
    this.#screen.end();
    this.#endRepeats();
    return this.#take();
  }

  #line(text: string, row?: number): void {
    let emitted = this.#openEmitted;
    this.#openEmitted = "";
    if (row !== undefined && emitted === "") {
      // A full-screen program redrawing a row as it was already sent (top's rows that did not change):
      // a redraw, collapsed. Only what changed reaches the text.
      if (this.#rows.get(row) === text) return;
      this.#rows.set(row, text);
    }
    if (emitted !== "" && !text.startsWith(emitted)) {
      // The start sent at a pause was redrawn into something else (apt's `Building dependency tree... 50%`,
      // then `... Done`): that start ends where it is, and the line goes out whole on a line of its own.
      this.#out += "\n";
      emitted = "";
    }
    this.#redrawn = false;
    if (PAGER_PROMPT.test(text) && text.trim() !== ":") return; // A pager prompt left on a line.
    if (text === "") {
      this.#endRepeats();
      if (!this.#blank) this.#out += "\n";
      this.#blank = true;
      this.#last = null;
      return;
    }
    this.#blank = false;
    if (text === this.#last && emitted === "") {
      this.#repeats++;
      return;
    }
    this.#endRepeats();
    this.#last = text;
    this.#out += text.slice(emitted.length) + "\n";
  }

  #endRepeats(): void {
    if (this.#repeats === 0) return;
    this.#out += `[previous line repeated ${this.#repeats} more time${this.#repeats === 1 ? "" : "s"}]\n`;
    this.#repeats = 0;
  }

  /** The text so far in chunks, then the other events gathered, then the status rows' latest states. */
  #take(): ViewEvent[] {
    const events: ViewEvent[] = [];
    for (const data of chunks(this.#out, CHUNK_BYTES)) events.push({ type: "text", data });
    this.#out = "";
    events.push(...this.#events);
    this.#events.length = 0;
    for (const [row, data] of this.#status) {
      events.push({ type: "line_update", data, row });
      if (data === "") this.#statusSent.delete(row);
      else this.#statusSent.add(row);
    }
    this.#status.clear();
    return events;
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * `text` cut into pieces of at most `max` UTF-8 bytes, at line ends where possible, never inside a
 * character. Linear: the text is encoded once and cut by byte index.
 */
export function chunks(text: string, max: number): string[] {
  if (text === "") return [];
  if (text.length * 3 <= max) return [text];
  const bytes = encoder.encode(text);
  const out: string[] = [];
  let start = 0;
  while (start < bytes.length) {
    if (bytes.length - start <= max) {
      out.push(decoder.decode(bytes.subarray(start)));
      break;
    }
    let end = start + max;
    while (end > start && (bytes[end]! & 0xc0) === 0x80) end--; // Not inside a character.
    let cut = end; // After the last line end within this piece, else at the limit.
    for (let i = end - 1; i >= start; i--) {
      if (bytes[i] === 0x0a) {
        cut = i + 1;
        break;
      }
    }
    out.push(decoder.decode(bytes.subarray(start, cut)));
    start = cut;
  }
  return out;
}
