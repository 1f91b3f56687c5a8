/**
 * `TerminalModel`: a terminal emulator (`@xterm/headless`) that output is fed into, and that can be
 * snapshotted as a {@link ScreenSnapshot}.
 *
 * xterm is loaded with a dynamic `import()` on the first {@link TerminalModel.create}: importing it costs
 * ~50 ms and ~46 MiB, which a process that never snapshots a screen must not pay (1000 idle sessions fit
 * in 100 MiB only without it). Only types are imported statically.
 *
 * Unicode widths are pinned to Unicode 11 (the unicode11 addon), so emoji are two cells wide whatever
 * xterm's built-in default (Unicode 6) would say; snapshots do not depend on the host.
 *
 * @module
 */
import type { IBufferCell, IBufferLine, Terminal } from "@xterm/headless";
import type { Unicode11Addon } from "@xterm/addon-unicode11";
import type { CellRun, Color, ScreenSnapshot, SnapshotOptions } from "./snapshot.ts";
import { type ClampSize, CsiClamp } from "./clamp.ts";

interface Xterm {
  readonly Terminal: typeof Terminal;
  readonly Unicode11Addon: typeof Unicode11Addon;
}

let loading: Promise<Xterm> | null = null;

/** Loads xterm and the unicode11 addon once per process (later calls share the first load). */
export function loadXterm(): Promise<Xterm> {
  loading ??= Promise.all([import("@xterm/headless"), import("@xterm/addon-unicode11")]).then(
    ([headless, unicode]) => ({
      Terminal: headless.default.Terminal,
      Unicode11Addon: unicode.default.Unicode11Addon,
    }),
    (error: unknown) => {
      loading = null; // Let a later request try again rather than fail forever.
      throw error;
    },
  );
  return loading;
}

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
/** Smallest slice, however large the screen. */
export const MIN_SLICE = 64;

/**
 * The slice length for a screen: xterm checks its time budget (12 ms) only between writes, so output is
 * handed over in slices whose worst-case cost is bounded, and that cost grows with the screen's area
 * (an erase or a clamped repeat touches every cell).
 */
export function sliceLength(size: ClampSize): number {
  const cells = Math.max(1, size.cols) * Math.max(1, size.rows);
  return Math.max(MIN_SLICE, Math.min(MAX_SLICE, Math.floor((MAX_SLICE * 2048) / cells)));
}

/** The private part of xterm that knows whether the cursor is shown (DECTCEM); no public API has it. */
interface CoreWithCursor {
  readonly _core?: { readonly coreService?: { readonly isCursorHidden?: unknown } };
}

/**
 * A headless terminal. Writes are never awaited: xterm parses them asynchronously, and
 * {@link settled} resolves once everything written so far is parsed. Take snapshots after it.
 *
 * xterm throws when more than 50 MB are queued unparsed: a producer faster than ~50 MB/s must watch
 * {@link pending} (or pass `onParsed` to a {@link Watermarks}) and hold back.
 *
 * The clock always wins over parsing: output goes through a {@link CsiClamp} (counts whose cost grows
 * without bound are clamped to the screen, which draws the same screen) and reaches xterm in slices of
 * {@link sliceLength}, between which xterm yields to timers once its 12 ms budget is spent.
 */
export class TerminalModel {
  readonly #term: Terminal;
  readonly #onParsed: ((units: number) => void) | undefined;
  #title = "";
  #pending = 0;
  /** Writes (and deferred resizes) whose callback has not run yet. */
  #outstanding = 0;
  #disposed = false;
  readonly #clamp = new CsiClamp();
  /** Bytes written as `Uint8Array` are decoded here (a character split across writes is joined). */
  readonly #decoder = new TextDecoder();
  /** The size that output written now will be drawn for (resizes are deferred until parsed). */
  #size: ClampSize;

  /** Creates a model, loading xterm first if this process has not yet. */
  static async create(options: TerminalModelOptions = {}): Promise<TerminalModel> {
    return new TerminalModel(await loadXterm(), options);
  }

  private constructor(xterm: Xterm, options: TerminalModelOptions) {
    this.#term = new xterm.Terminal({
      cols: options.cols ?? 80,
      rows: options.rows ?? 24,
      scrollback: options.scrollback ?? 0,
      allowProposedApi: true, // `unicode` and `buffer` are "proposed" API in the headless build.
      convertEol: false, // The terminal driver already turned \n into \r\n (onlcr).
      // xterm logs each malformed sequence to the console: hostile output would flood stderr and each
      // log costs milliseconds.
      logLevel: "off",
    });
    this.#size = { cols: this.#term.cols, rows: this.#term.rows };
    this.#term.loadAddon(new xterm.Unicode11Addon());
    this.#term.unicode.activeVersion = "11";
    this.#term.onTitleChange((title) => this.#title = title);
    this.#onParsed = options.onParsed;
  }

  /** Columns (after every resize parsed so far). */
  get cols(): number {
    return this.#term.cols;
  }

  /** Rows (after every resize parsed so far). */
  get rows(): number {
    return this.#term.rows;
  }

  /** Units written but not yet parsed (bytes of `Uint8Array`s, UTF-16 code units of strings). */
  get pending(): number {
    return this.#pending;
  }

  /** True when the program switched on application cursor keys (DECCKM), as of what was parsed. */
  get applicationCursor(): boolean {
    return this.#term.modes.applicationCursorKeysMode;
  }

  /**
   * Feeds output. Strings are taken as decoded text; bytes as UTF-8 (a character split across writes is
   * joined; invalid bytes become U+FFFD).
   */
  write(data: string | Uint8Array): void {
    if (this.#disposed || data.length === 0) return;
    const units = data.length;
    const text = typeof data === "string" ? data : this.#decoder.decode(data, { stream: true });
    const filtered = this.#clamp.feed(text, this.#size);
    this.#pending += units;
    const step = sliceLength(this.#size);
    let at = 0;
    while (filtered.length - at > step) {
      let end = at + step;
      const last = filtered.charCodeAt(end - 1);
      if (last >= 0xd800 && last <= 0xdbff) end--; // Keep a surrogate pair in one slice.
      this.#term.write(filtered.slice(at, end));
      at = end;
    }
    this.#outstanding++;
    this.#term.write(at === 0 ? filtered : filtered.slice(at), () => {
      this.#pending -= units;
      this.#outstanding--;
      this.#onParsed?.(units);
    });
  }

  /**
   * Resizes the screen, after everything written so far: xterm's own resize takes effect at once, which
   * would reflow output that was written before it but is not parsed yet.
   */
  resize(cols: number, rows: number): void {
    if (this.#disposed) return;
    this.#size = { cols, rows };
    if (this.#outstanding === 0) {
      this.#term.resize(cols, rows);
      return;
    }
    // Callbacks run right after their chunk is parsed, before the next one: the resize lands in order.
    this.#outstanding++;
    this.#term.write("", () => {
      this.#outstanding--;
      this.#term.resize(cols, rows);
    });
  }

  /** Resolves once everything written (and every resize) so far is parsed. */
  settled(): Promise<void> {
    if (this.#outstanding === 0 || this.#disposed) return Promise.resolve();
    return new Promise((resolve) => this.#term.write("", resolve));
  }

  /**
   * The screen as parsed so far (call {@link settled} first to include everything written). `partial`
   * is always false here; whoever fed the model late says otherwise.
   */
  snapshot(options: SnapshotOptions = {}): ScreenSnapshot {
    const term = this.#term;
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
    const hidden = (term as unknown as CoreWithCursor)._core?.coreService?.isCursorHidden;
    return {
      cols: term.cols,
      rows: term.rows,
      cursor: {
        // xterm parks the cursor one past the last column until the next character wraps (pending wrap).
        x: Math.min(buffer.cursorX, term.cols - 1),
        y: buffer.cursorY,
        visible: hidden !== true,
      },
      alt_screen: buffer.type === "alternate",
      title: this.#title,
      partial: false,
      lines,
      ...(options.cells ? { cells } : {}),
    };
  }

  /** Frees the emulator; later writes are ignored. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#term.dispose();
  }
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
