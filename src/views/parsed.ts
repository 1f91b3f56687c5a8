/**
 * The parsed view: screen-aware. A line-oriented program reads as in the compact view. A full-screen one
 * (the alternate screen, or redraws by cursor address) reads as its screen once it settles, then only the
 * rows that changed, with their row numbers; a pager's prompt (`--More--`, `(END)`, `:`) is reported as a
 * prompt, not as a row of content.
 *
 * The first screen is the one the program drew, not a report taken before it drew: a blank screen (cleared,
 * nothing drawn yet) is not reported until the end; a first report taken while output was still arriving
 * (less than {@link SETTLE_SECONDS} before) does not start the pacing, so the next flush reports the rest
 * at once; and rows of the first screen that scrolled off the top before it was ever reported (`top -n 1`
 * ends with a newline on its last row, which scrolls its header away) are reported as text before it.
 *
 * The screen comes from Specter's terminal model (xterm.js, headless), fed the same output.
 *
 * @module
 */
import { TerminalModel } from "../terminal/mod.ts";
import type { ViewEvent } from "../protocol/mod.ts";
import { CompactView, type FlushOptions, PAGER_PROMPT } from "./compact.ts";

/** A full repaint is sent instead of a diff when more than this share of the rows changed. */
const REPAINT_SHARE = 0.5;
/**
 * A screen that keeps changing on its own (`top`, a dashboard) is reported at most this often (seconds);
 * one that input changed, one waiting at a pager prompt, the first and the last are reported at once.
 */
export const SCREEN_INTERVAL_SECONDS = 2;

/**
 * A pause in the output at least this long counts as the program settling: a recording is flushed at such
 * pauses, and a screen reported sooner after output may have been caught mid-draw.
 */
export const SETTLE_SECONDS = 0.2;

/** The view's clock, in seconds: wall time, the clock of frames' `ts` (see {@link ParsedView.push}). */
function clock(): number {
  return Date.now() / 1000;
}

/** At most this many scroll distances are tried per diff (each costs a pass over the rows). */
const MAX_SCROLL_TRIES = 8;

/** Rows of `rows` that differ from `shown` once `shown` moved up `by` rows (1-based row numbers). */
function changedRows(shown: readonly string[], rows: readonly string[], by: number) {
  const changed: { row: number; text: string }[] = [];
  for (let i = 0; i < Math.max(shown.length - by, rows.length); i++) {
    const text = rows[i] ?? "";
    if ((shown[i + by] ?? "") !== text) changed.push({ row: i + 1, text });
  }
  return changed;
}

/**
 * The smallest report of how `shown` became `rows`: the rows that changed in place, or, when the screen
 * scrolled (a program that ends with a newline on the last row, a log under a status line), how far it
 * moved up and the rows that then differ. Scroll distances are taken from where the first rows of the new
 * screen appear in the old one, so a diff costs a few passes, not one per row.
 */
export function screenDiff(
  shown: readonly string[],
  rows: readonly string[],
): { scrolled: number; changed: { row: number; text: string }[] } {
  let best = { scrolled: 0, changed: changedRows(shown, rows, 0) };
  const tried = new Set<number>();
  for (let i = 0; i < Math.min(3, rows.length) && best.changed.length > 1; i++) {
    if (rows[i] === "") continue;
    for (let j = i + 1; j < shown.length && tried.size < MAX_SCROLL_TRIES; j++) {
      const by = j - i;
      if (shown[j] !== rows[i] || tried.has(by)) continue;
      tried.add(by);
      const changed = changedRows(shown, rows, by);
      if (changed.length < best.changed.length) best = { scrolled: by, changed };
    }
  }
  return best;
}

/** Size of the screen the parsed view models. */
export interface ParsedViewOptions {
  readonly cols?: number;
  readonly rows?: number;
}

/** Turns raw output into parsed events (see the module documentation). */
export class ParsedView {
  readonly #compact: CompactView;
  readonly #model: TerminalModel;
  /** True while the program draws a full screen. */
  #full = false;
  /** Text the line reading had before the program went full-screen, not flushed yet. */
  #before: ViewEvent[] = [];
  /** The screen rows last reported; null when the next screen goes out whole. */
  #shown: string[] | null = null;
  #prompt: string | null = null;
  /** When the screen was last reported (seconds on the flush clock). */
  #reportedAt = -Infinity;
  /** Input was sent since the screen was last reported. */
  #input = false;
  /** When output last came (seconds on the flush clock). */
  #outputAt = -Infinity;
  /** The last report may have caught the screen mid-draw: the next one is not paced. */
  #unsettled = false;
  /** Where in the text being pushed the program went full-screen (-1: it did not in this push). */
  #switchAt = -1;
  /**
   * Lines above the screen when it went full-screen (see {@link TerminalModel.above}): those scrolled off
   * after it, before its first report, are that report's first rows. Null once it has been reported.
   */
  #base: number | null = null;

  private constructor(model: TerminalModel) {
    this.#model = model;
    this.#compact = new CompactView((alternate, at) => {
      if (alternate === false) {
        // Back from the alternate screen: line output again, and the next screen goes out whole.
        if (this.#full) this.#compact.flush(); // What the line reading made of the full screen: dropped.
        this.#full = false;
        this.#shown = null;
        this.#base = null;
        return;
      }
      // Going full-screen: the lines before it are content; what follows is screen, shown as rows.
      if (!this.#full) {
        this.#before.push(...this.#compact.flush().filter((e) => e.type === "text"));
        if (this.#switchAt < 0) this.#switchAt = at;
      }
      this.#full = true;
    });
  }

  /** A parsed view of a `cols`×`rows` terminal (default 80×24). */
  static async create(options: ParsedViewOptions = {}): Promise<ParsedView> {
    const rows = options.rows ?? 24;
    // A screen's worth of scrollback: the rows a first screen may lose off the top before it is reported.
    return new ParsedView(await TerminalModel.create({ cols: options.cols ?? 80, rows, scrollback: rows }));
  }

  /**
   * Takes output text that came at `now` (seconds on the flush clock: a frame's `ts`, a recording's time;
   * default: now).
   */
  push(text: string, now: number = clock()): void {
    this.#outputAt = now;
    this.#switchAt = -1;
    this.#compact.push(text);
    const at = this.#switchAt;
    if (at < 0) {
      this.#model.write(text);
      return;
    }
    // Where the screen stood when the program went full-screen, read in stream order (the model parses
    // later): lines that scroll off after this point belong to the first screen.
    this.#model.write(text.slice(0, at));
    this.#model.whenParsed(() => this.#base = this.#model.above);
    this.#model.write(text.slice(at));
  }

  /** Input was sent to the program: the screen it leads to is reported at the next flush. */
  input(): void {
    this.#input = true;
  }

  /** The terminal was resized: the next screen goes out whole. */
  resize(cols: number, rows: number): void {
    this.#model.resize(cols, rows);
    this.#shown = null;
  }

  /** Events for everything taken so far: the screen as parsed once the model has caught up. */
  async flush(options: FlushOptions = {}): Promise<ViewEvent[]> {
    const lines = this.#compact.flush(options);
    const before = this.#before.splice(0);
    if (!this.#full) return [...before, ...lines];
    const now = options.now ?? clock();
    return [...before, ...await this.#screen(now, false)];
  }

  /** The end of the output. */
  async end(): Promise<ViewEvent[]> {
    const full = this.#full;
    const lines = this.#compact.end();
    const before = this.#before.splice(0);
    const screen = full ? await this.#screen(Infinity, true) : [];
    this.#model.dispose();
    return [...before, ...(full ? screen : lines)];
  }

  /** The screen's events at `now`; `always` reports it even when paced (the end). */
  async #screen(now: number, always: boolean): Promise<ViewEvent[]> {
    await this.#model.settled();
    const snapshot = this.#model.snapshot();
    const rows = [...snapshot.lines];
    const events: ViewEvent[] = [];
    // A pager's prompt sits on the last drawn row (where the cursor waits).
    const last = rows.length - 1;
    const prompt = last >= 0 && PAGER_PROMPT.test(rows[last]!) ? rows[last]!.trim() : null;
    // Nothing drawn yet (the program cleared the screen and is still working): no first screen to report.
    if (!always && this.#shown === null && rows.every((row) => row === "")) return events;
    const due = always || this.#shown === null || this.#input || prompt !== null || this.#unsettled ||
      now - this.#reportedAt >= SCREEN_INTERVAL_SECONDS;
    if (!due) return events; // Still changing on its own: the next report shows where it got to.
    this.#input = false;
    this.#reportedAt = now;
    this.#unsettled = this.#shown === null && now - this.#outputAt < SETTLE_SECONDS;
    if (prompt !== null) rows[last] = "";
    while (rows.length > 0 && rows[rows.length - 1] === "") rows.pop();
    const shown = this.#shown;
    if (shown === null) {
      // Rows of this first screen that scrolled off its top before it was reported.
      const base = this.#base;
      this.#base = null;
      const lost = base === null ? 0 : Math.min(this.#model.above - base, snapshot.rows);
      if (lost > 0) {
        const text = this.#model.linesAbove(lost).filter((line) => line !== "").map((line) => line + "\n");
        if (text.length > 0) events.push({ type: "text", data: text.join("") });
      }
      events.push({ type: "screen", rows, alternate: snapshot.alt_screen });
    } else {
      const { scrolled, changed } = screenDiff(shown, rows);
      if (changed.length > snapshot.rows * REPAINT_SHARE) {
        events.push({ type: "screen", rows, alternate: snapshot.alt_screen });
      } else if (scrolled > 0) events.push({ type: "rows", scrolled, rows: changed });
      else if (changed.length > 0) events.push({ type: "rows", rows: changed });
    }
    this.#shown = rows;
    if (prompt !== null && prompt !== this.#prompt) {
      events.push({ type: "prompt", kind: "pager", text: prompt });
    }
    this.#prompt = prompt;
    return events;
  }
}
