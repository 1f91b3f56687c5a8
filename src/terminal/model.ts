/**
 * `TerminalModel`: a terminal emulator (`@xterm/headless`) that output is fed into, and that can be
 * snapshotted as a {@link ScreenSnapshot}.
 *
 * xterm is loaded with a dynamic `import()` on the first {@link TerminalModel.create} (see
 * `load_xterm.ts`): a process that never snapshots a screen does not pay for it. Only types are imported
 * statically. The private parts of xterm the model relies on are in `_xterm_core.ts`; reading a screen
 * out of xterm is in `_read_screen.ts`.
 *
 * Unicode widths are pinned to Unicode 11 (the unicode11 addon), so emoji are two cells wide whatever
 * xterm's built-in default (Unicode 6) would say; snapshots do not depend on the host.
 *
 * @module
 */
import type { Terminal } from "@xterm/headless";
import type { ScreenSnapshot } from "../protocol/mod.ts";
import type { SnapshotOptions } from "./snapshot.ts";
import { type ClampSize, CsiClamp } from "./clamp.ts";
import { loadXterm, type Xterm } from "./load_xterm.ts";
import { dropMarkersOnReset, guardParser, heldLinks } from "./_xterm_core.ts";
import { readScreen } from "./_read_screen.ts";

// Tests and callers that know `loadXterm` from here keep finding it.
export { loadXterm };

/** Options of {@link TerminalModel.create}. */
export interface TerminalModelOptions {
  /** Columns (default 80). */
  readonly cols?: number;
  /** Rows (default 24). */
  readonly rows?: number;
  /**
   * Lines kept above the screen (default 0). Snapshots show only the screen, and each 1000 lines of
   * scrollback cost ~2.5 MB.
   */
  readonly scrollback?: number;
  /** Called each time written data was parsed, with its length (for {@link Watermarks}). */
  readonly onParsed?: (units: number) => void;
}

/** Largest slice of output handed to xterm at once (UTF-16 units), on a screen of up to 2048 cells. */
export const MAX_SLICE = 4096;
/** Most characters a model holds unparsed before `write` throws (xterm's own limit: 50 MB). */
export const MAX_PENDING = 50_000_000;
/** Smallest slice, however large the screen. */
export const MIN_SLICE = 64;

/**
 * The slice length for a screen: xterm checks its time budget (12 ms) only between writes, so output is
 * handed over in slices whose worst-case cost is bounded, and that cost grows with the screen's area
 * (an erase or a clamped repeat touches every cell). `density`: the output's estimated work per character
 * (its units over its length, at least 1): costly sequences (resets, line inserts, repeats) shrink the
 * slices in proportion, so that a slice of them costs no more than one of plain text. Without this, a
 * slice of 4,096 characters of `REP`+`IL`+`RIS` took 100–165 ms, and no timer fired in between.
 */
export function sliceLength(size: ClampSize, density = 1): number {
  const cells = Math.max(1, size.cols) * Math.max(1, size.rows);
  const plain = Math.min(MAX_SLICE, Math.floor((MAX_SLICE * 2048) / cells));
  return Math.max(MIN_SLICE, Math.floor(plain / Math.max(1, density)));
}

/** What the model hands to xterm, in order: a slice of output, a resize, or a `settled` waiter. */
type Step =
  | { readonly text: string; readonly units: number }
  | { readonly cols: number; readonly rows: number }
  | { readonly settle: () => void };

/**
 * A headless terminal. Writes are never awaited: xterm parses them asynchronously, and
 * {@link settled} resolves once everything written so far is parsed. Take snapshots after it.
 *
 * `write` throws when more than {@link MAX_PENDING} characters are queued unparsed: a producer faster than
 * ~50 MB/s must watch {@link pending} (or pass `onParsed` to a {@link Watermarks}) and hold back.
 *
 * The clock always wins over parsing: output goes through a {@link CsiClamp} (counts whose cost grows
 * without bound are clamped to the screen, which draws the same screen) and reaches xterm in slices of
 * {@link sliceLength}, between which xterm yields to timers once its 12 ms budget is spent.
 */
export class TerminalModel {
  /** The emulator; replaced by a fresh one after a fault (see `#guardParser`). */
  #term: Terminal;
  readonly #xterm: Xterm;
  readonly #scrollback: number;
  readonly #onParsed: ((units: number) => void) | undefined;
  #title = "";
  #pending = 0;
  /**
   * Slices, resizes and `settled` waiters not yet handed to xterm, in order; one slice at a time is
   * xterm's, so that {@link abandon} can drop the rest.
   */
  #steps: Step[] = [];
  #head = 0;
  #inFlight = false;
  /** Characters in `#steps` and in flight, not yet parsed. */
  #queued = 0;
  #disposed = false;
  #abandoned = false;
  readonly #clamp = new CsiClamp();
  /** Bytes written as `Uint8Array` are decoded here (a character split across writes is joined). */
  readonly #decoder = new TextDecoder();
  /** The size that output written now will be drawn for (resizes are deferred until parsed). */
  #size: ClampSize;
  /** Times xterm threw on output or a resize and was reset (see {@link faults}). */
  #faults = 0;

  /** Creates a model, loading xterm first if this process has not yet. */
  static async create(options: TerminalModelOptions = {}): Promise<TerminalModel> {
    return new TerminalModel(await loadXterm(), options);
  }

  private constructor(xterm: Xterm, options: TerminalModelOptions) {
    this.#xterm = xterm;
    this.#scrollback = options.scrollback ?? 0;
    this.#term = this.#newTerminal(options.cols ?? 80, options.rows ?? 24);
    this.#size = { cols: this.#term.cols, rows: this.#term.rows };
    this.#onParsed = options.onParsed;
  }

  /** An emulator of `cols`×`rows` with Unicode 11 widths, its title watched and its parser guarded. */
  #newTerminal(cols: number, rows: number): Terminal {
    const term = new this.#xterm.Terminal({
      cols,
      rows,
      scrollback: this.#scrollback,
      allowProposedApi: true, // `unicode` and `buffer` are "proposed" API in the headless build.
      convertEol: false, // The terminal driver already turned \n into \r\n (onlcr).
      // xterm logs each malformed sequence to the console: hostile output would flood stderr and each
      // log costs milliseconds.
      logLevel: "off",
    });
    term.loadAddon(new this.#xterm.Unicode11Addon());
    term.unicode.activeVersion = "11";
    term.onTitleChange((title) => this.#title = title);
    this.#guardParser(term);
    dropMarkersOnReset(term);
    return term;
  }

  /**
   * xterm parses queued writes from its own timer, so an exception in its parser (xterm 6.0.0 has known
   * ones: a resize can leave screen rows without a buffer line, and a later erase or line feed then
   * throws, xtermjs/xterm.js#6063) would be uncaught and end this whole process, and the write's callback
   * would never run, so {@link settled} would never resolve. The program's output is hostile input: the
   * parse step is wrapped, and a throw replaces the emulator with a fresh one of the same size (the screen
   * starts again blank, and snapshots say `partial`). A reset of the same emulator is not enough: its
   * parser, interrupted inside a handler, would skip a character of the next write. An xterm without this
   * step fails here, loudly, rather than run unguarded.
   */
  #guardParser(term: Terminal): void {
    guardParser(term, () => this.#recover(term));
  }

  /**
   * Replaces `broken` (the current emulator, which threw) with a fresh one of its size. The broken one
   * still calls the callback of the slice it was parsing (which hands the next slice to the new one), and
   * is disposed after that.
   */
  #recover(broken: Terminal): void {
    if (broken !== this.#term || this.#disposed) return;
    this.#faults++;
    try {
      this.#term = this.#newTerminal(broken.cols, broken.rows);
    } catch {
      // Could not even make a new one (out of memory): go on with the broken one rather than throw into
      // xterm's timer; its next throw comes back here.
      return;
    }
    setTimeout(() => {
      try {
        broken.dispose();
      } catch {
        // A broken emulator may fail to tear down too; it is dropped either way.
      }
    }, 0);
  }

  /**
   * @internal Hyperlinks (OSC 8) xterm holds, for tests: a reset must drop them with the screen. Throws
   * when this xterm keeps them elsewhere (a private map of `@xterm/headless` 6.0.0).
   */
  get heldLinks(): number {
    return heldLinks(this.#term);
  }

  /**
   * Times xterm threw while parsing output or resizing and was reset: output was lost, so every later
   * snapshot says `partial: true`.
   */
  get faults(): number {
    return this.#faults;
  }

  /** Columns (after every resize parsed so far). */
  get cols(): number {
    return this.#term.cols;
  }

  /** Rows (after every resize parsed so far). */
  get rows(): number {
    return this.#term.rows;
  }

  /**
   * Units written but not yet parsed (bytes of `Uint8Array`s, UTF-16 code units of strings, plus the
   * estimated extra work of costly control sequences).
   */
  get pending(): number {
    return this.#pending;
  }

  /**
   * Lines above the screen in the active buffer, as of what was parsed: how far the normal screen has
   * scrolled up (0 on the alternate screen), up to the `scrollback` kept.
   */
  get above(): number {
    return this.#term.buffer.active.baseY;
  }

  /** The last `count` lines above the screen (oldest first, trailing blanks dropped; see {@link above}). */
  linesAbove(count: number): string[] {
    const buffer = this.#term.buffer.active;
    const lines: string[] = [];
    for (let y = Math.max(0, buffer.baseY - count); y < buffer.baseY; y++) {
      lines.push(buffer.getLine(y)?.translateToString(true).replace(/ +$/, "") ?? "");
    }
    return lines;
  }

  /** True when the program switched on application cursor keys (DECCKM), as of what was parsed. */
  get applicationCursor(): boolean {
    return this.#term.modes.applicationCursorKeysMode;
  }

  /**
   * Feeds output. Strings are taken as decoded text; bytes as UTF-8 (a character split across writes is
   * joined; invalid bytes become U+FFFD). Returns the units this write counts for in {@link pending} and
   * `onParsed`: its length plus the estimated extra work of its control sequences (see `CsiClamp.extra`),
   * so that a backlog of costly sequences holds reading back as soon as one of plain text of that cost.
   * After {@link abandon} (or dispose) output is ignored and counts 0.
   */
  write(data: string | Uint8Array): number {
    if (this.#disposed || this.#abandoned || data.length === 0) return 0;
    const text = typeof data === "string" ? data : this.#decoder.decode(data, { stream: true });
    const filtered = this.#clamp.feed(text, this.#size);
    const units = data.length + this.#clamp.extra;
    if (this.#queued + filtered.length > MAX_PENDING) {
      // As xterm itself did when it held the backlog: memory stays bounded for a producer that ignores
      // `pending`. (Counted in characters: `pending` also weighs their parsing work.)
      throw new RangeError(
        `The terminal model holds ${this.#queued} characters unparsed, at most ${MAX_PENDING}`,
      );
    }
    this.#queued += filtered.length;
    this.#pending += units;
    const step = sliceLength(this.#size, units / data.length);
    let at = 0;
    while (filtered.length - at > step) {
      let end = at + step;
      const last = filtered.charCodeAt(end - 1);
      if (last >= 0xd800 && last <= 0xdbff) end--; // Keep a surrogate pair in one slice.
      this.#steps.push({ text: filtered.slice(at, end), units: 0 });
      at = end;
    }
    // The write's units are done when its last slice is.
    this.#steps.push({ text: at === 0 ? filtered : filtered.slice(at), units });
    this.#pump();
    return units;
  }

  /**
   * Resizes the screen, after everything written so far: xterm's own resize takes effect at once, which
   * would reflow output that was written before it but is not parsed yet.
   */
  resize(cols: number, rows: number): void {
    if (this.#disposed) return;
    this.#size = { cols, rows };
    this.#steps.push({ cols, rows });
    this.#pump();
  }

  /**
   * Calls `fn` once everything written so far is parsed and before anything written later is: in stream
   * order, synchronously (a promise's callback would run only after xterm had gone on parsing). A model
   * disposed first calls it at disposal, as it resolves {@link settled}; one already disposed never does.
   */
  whenParsed(fn: () => void): void {
    if (this.#disposed) return;
    if (!this.#inFlight && this.#head === this.#steps.length) fn();
    else this.#steps.push({ settle: fn });
  }

  /** Resolves once everything written (and every resize) so far is parsed. */
  settled(): Promise<void> {
    if (this.#disposed || (!this.#inFlight && this.#head === this.#steps.length)) return Promise.resolve();
    return new Promise((settle) => this.#steps.push({ settle }));
  }

  /**
   * Stops parsing: output not yet handed to xterm (all but at most one slice) is dropped, and so is all
   * later output; resizes still apply. For a session whose program was killed (timeout, ceiling): its
   * remaining output must not keep the clock waiting. Returns the units dropped (0: the screen is
   * complete).
   */
  abandon(): number {
    if (this.#disposed) return 0;
    this.#abandoned = true;
    let units = 0;
    const kept: Step[] = [];
    for (let k = this.#head; k < this.#steps.length; k++) {
      const step = this.#steps[k]!;
      if ("text" in step) {
        units += step.units; // A write's units ride on its last slice.
        this.#queued -= step.text.length;
      } else kept.push(step);
    }
    this.#steps = kept;
    this.#head = 0;
    if (units > 0) {
      this.#pending -= units;
      this.#onParsed?.(units);
    }
    this.#pump();
    return units;
  }

  /** Hands the next steps to xterm: resizes and waiters once the slice before them is parsed. */
  #pump(): void {
    while (!this.#inFlight && this.#head < this.#steps.length) {
      const step = this.#steps[this.#head++]!;
      if ("text" in step) {
        this.#inFlight = true;
        // xterm runs the callback right after parsing the slice, before its next one.
        this.#term.write(step.text, () => {
          this.#inFlight = false;
          this.#queued -= step.text.length;
          if (step.units > 0 && !this.#disposed) {
            this.#pending -= step.units;
            this.#onParsed?.(step.units);
          }
          this.#pump();
        });
      } else if ("settle" in step) {
        step.settle();
      } else {
        this.#resize(step.cols, step.rows);
      }
    }
    if (this.#head === this.#steps.length) {
      this.#steps = [];
      this.#head = 0;
    }
  }

  /** Resizes xterm; a throw is recovered from as a parse fault is, and the resize tried once more. */
  #resize(cols: number, rows: number): void {
    try {
      this.#term.resize(cols, rows);
    } catch {
      // A fresh emulator of the old size, resized: its buffers were never touched by the output.
      this.#recover(this.#term);
      try {
        this.#term.resize(cols, rows);
      } catch {
        // Not seen: the output goes on at the old size rather than end the session.
      }
    }
  }

  /**
   * The screen as parsed so far (call {@link settled} first to include everything written). `partial`
   * is true only after a fault ({@link faults}); whoever fed the model late says so too.
   */
  snapshot(options: SnapshotOptions = {}): ScreenSnapshot {
    return readScreen(this.#term, options, this.#title, this.#faults > 0);
  }

  /** Frees the emulator; later writes are ignored, waiting {@link settled} calls resolve. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    const steps = this.#steps.slice(this.#head);
    this.#steps = [];
    this.#head = 0;
    for (const step of steps) if ("settle" in step) step.settle();
    this.#term.dispose();
  }
}
