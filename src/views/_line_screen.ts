/**
 * A line-oriented reading of terminal output: what a terminal would leave on each line, without keeping a
 * screen. Private to `src/views/`.
 *
 * It interprets the sequences that line-oriented programs use to redraw (carriage return, backspace, erase
 * in line, cursor left/right/column, cursor up over lines not handed out yet) and drops the rest (colours,
 * modes, titles, OSC, DCS). Text drawn away from the cursor between a cursor save and restore (the status
 * row of `apt`, `dpkg` and similar) is a *status* update of that row, not content.
 *
 * @module
 */

/** Events of the line screen, in order. */
export interface LineSink {
  /**
   * A finished line (its final state: what the terminal shows once the line ends), with its screen row
   * (1-based) when the program placed the cursor by row (a full-screen program), else undefined.
   */
  line(text: string, row?: number): void;
  /** The status row `row` (1-based) now reads `text`. */
  status(row: number, text: string): void;
  /**
   * The status rows are gone: the program reset its scroll region (apt and dpkg keep their status row
   * outside one, and reset it when they are done, then erase the row).
   */
  statusEnd(): void;
  /**
   * Rows were erased (erase in display): from `row` down, or the whole screen when `row` is undefined. What
   * is drawn there next is new, even if it reads as before (`clear`, then the same output again).
   */
  erased(row?: number): void;
  /** A line was redrawn in place (a carriage return over drawn text): a progress line or a spinner. */
  redraw(): void;
  /**
   * A full-screen sign: the alternate screen (true on entry) or a cursor-addressed redraw. `at` is where
   * the sign's sequence ends in the text of the push that carried it (so a caller can split that text there).
   */
  screen(alternate: boolean | null, at: number): void;
}

const ESC = 0x1b;
/** Longest escape sequence kept while waiting for its end (longer ones are dropped whole). */
const MAX_ESCAPE = 4096;
/**
 * Widest line kept (Specter's largest terminal): a cursor moved further right (`ESC [ 99999999 C`) stays at
 * the edge, so hostile output cannot make a line allocate more.
 */
export const MAX_LINE = 1000;
/** Lines held for cursor-up at most (far more than any screen's height); older ones are handed out. */
export const MAX_HELD = 1000;
/** Tallest screen kept apart (Specter's largest terminal has 500 rows): further rows count as the last. */
export const MAX_ROWS = 500;

/** The open line: characters by column, and where the cursor is. */
class OpenLine {
  chars: string[] = [];
  #col = 0;
  get col(): number {
    return this.#col;
  }
  /** Moves the cursor, kept within the line's width. */
  set col(value: number) {
    this.#col = Number.isFinite(value) ? Math.min(Math.max(0, Math.trunc(value)), MAX_LINE - 1) : 0;
  }
  /** Draws `ch` at the cursor (at the last column, once the line is full, as a terminal does). */
  write(ch: string): void {
    while (this.chars.length < this.#col) this.chars.push(" ");
    this.chars[this.#col] = ch;
    this.col = this.#col + 1;
  }
  text(): string {
    return this.chars.join("").trimEnd();
  }
  clear(): void {
    this.chars = [];
    this.#col = 0;
  }
  /** Takes `chars` as the line (no copy: held lines are moved between the held list and here). */
  adopt(chars: string[]): void {
    this.chars = chars;
    this.#col = 0;
  }
}

/** Interprets output text incrementally (escape sequences may be split across pushes). */
export class LineScreen {
  readonly #sink: LineSink;
  #line = new OpenLine();
  /** Lines finished but not handed out yet (as characters): cursor-up may still move into them. */
  #held: string[][] = [];
  /** Index into {@link #held} of the line the cursor is on; `#held.length` is the open line. */
  #row = 0;
  /**
   * The screen row of `#held[0]` (of the open line when nothing is held), known once the program placed
   * the cursor by row (CUP); null until then, and again after the alternate screen is left.
   */
  #origin: number | null = null;
  #carry = "";
  /** Saved cursor (ESC 7 / CSI s): the open line's state at the save. */
  #saved: { chars: string[]; col: number } | null = null;
  /** The status row being drawn after a save and an absolute move; null when drawing at the cursor. */
  #statusRow: number | null = null;
  #status = new OpenLine();
  /** Where the escape sequence being handled ends in the current push's text (see {@link LineSink.screen}). */
  #at = 0;

  constructor(sink: LineSink) {
    this.#sink = sink;
  }

  /** The open line as drawn so far (no newline yet): a prompt, or a progress line. */
  get openLine(): string {
    return this.#line.text();
  }

  /** Interprets `text`. */
  push(text: string): void {
    const input = this.#carry + text;
    const carried = this.#carry.length;
    this.#carry = "";
    let i = 0;
    const n = input.length;
    while (i < n) {
      const code = input.charCodeAt(i);
      if (code === ESC) {
        const end = escapeEnd(input, i);
        if (end < 0) {
          // Incomplete: keep it for the next push (unless absurdly long: then it is dropped).
          if (n - i <= MAX_ESCAPE) this.#carry = input.slice(i);
          return;
        }
        this.#at = end - carried;
        this.#escape(input.slice(i, end));
        i = end;
        continue;
      }
      if (code >= 0x20 && code !== 0x7f) {
        // A run of printable characters.
        let j = i + 1;
        while (j < n) {
          const c = input.charCodeAt(j);
          if (c < 0x20 || c === 0x7f) break;
          j++;
        }
        const target = this.#statusRow === null ? this.#line : this.#status;
        for (const ch of input.slice(i, j)) target.write(ch);
        i = j;
        continue;
      }
      this.#control(code);
      i++;
    }
  }

  /**
   * Hands out every held line (the cursor can no longer move into them), keeping the open line. A status
   * row still being drawn is reported as it is (a program that saved the cursor and never restored it).
   */
  release(): void {
    this.#endStatus();
    const origin = this.#origin;
    const onHeld = this.#row < this.#held.length;
    if (onHeld) {
      // The cursor sits on a held line: everything above it is final; it and below stay as they are drawn.
      this.#held[this.#row] = this.#line.chars;
      this.#line.clear();
    }
    for (const [i, chars] of this.#held.entries()) {
      this.#sink.line(textOf(chars), rowOf(origin === null ? null : origin + i));
    }
    // The open line is the one after the held ones (unknown when the cursor was on one of them).
    this.#origin = origin === null || onHeld ? null : origin + this.#held.length;
    this.#held = [];
    this.#row = 0;
  }

  /** Ends the stream: the open line, if anything is drawn on it, is a finished line too. */
  end(): void {
    const onHeld = this.#row < this.#held.length;
    const open = this.#line.text();
    this.release();
    if (!onHeld && open !== "") this.#sink.line(open, rowOf(this.#origin));
    this.#line.clear();
  }

  #newline(): void {
    // A line feed while drawing a status row ends it: the program did not restore the cursor, and what
    // follows is content again.
    this.#endStatus();
    if (this.#row < this.#held.length) {
      this.#held[this.#row] = this.#line.chars;
      this.#row++;
      if (this.#row < this.#held.length) this.#line.adopt(this.#held[this.#row]!);
      else this.#line.clear();
      return;
    }
    this.#held.push(this.#line.chars);
    this.#line.clear();
    if (this.#held.length > MAX_HELD) { // Beyond any cursor-up.
      this.#sink.line(textOf(this.#held.shift()!), rowOf(this.#origin));
      if (this.#origin !== null) this.#origin++;
    }
    this.#row = this.#held.length;
  }

  /** Reports the status row being drawn, if any, and draws at the cursor again. */
  #endStatus(): void {
    if (this.#statusRow === null) return;
    this.#sink.status(this.#statusRow, this.#status.text());
    this.#statusRow = null;
    this.#status.clear();
    this.#saved = null;
  }

  #control(code: number): void {
    const line = this.#statusRow === null ? this.#line : this.#status;
    switch (code) {
      case 0x0a: // LF
      case 0x0b: // VT
      case 0x0c: // FF
        this.#newline();
        return;
      case 0x0d: // CR
        if (line === this.#line && line.chars.length > 0) this.#sink.redraw();
        line.col = 0;
        return;
      case 0x08: // BS
        if (line.col > 0) line.col--;
        return;
      case 0x09: // TAB
        line.write("\t");
        return;
      default:
        return; // BEL and the other controls draw nothing.
    }
  }

  #escape(sequence: string): void {
    const second = sequence.charCodeAt(1);
    if (second === 0x5b) return this.#csi(sequence); // ESC [
    if (sequence === "\x1b7") return this.#save();
    if (sequence === "\x1b8") return this.#restore();
    if (sequence === "\x1bc") return this.#sink.screen(null, this.#at); // RIS: a reset, typical of full-screen use.
    // OSC, DCS, SOS, PM, APC, charsets, keypad modes, index: nothing to show.
  }

  #csi(sequence: string): void {
    const final = sequence[sequence.length - 1]!;
    const body = sequence.slice(2, -1);
    const privateMode = body.startsWith("?");
    const params = (privateMode ? body.slice(1) : body).split(";").map((p) => Number.parseInt(p, 10));
    /** Parameter `i`, 0 when absent or not a number. */
    const param = (i: number) => {
      const value = params[i];
      return value === undefined || Number.isNaN(value) ? 0 : Math.min(value, 1_000_000);
    };
    const first = param(0);
    const line = this.#statusRow === null ? this.#line : this.#status;
    switch (final) {
      case "m":
        return; // Colours and attributes.
      case "K":
        if (first === 0) line.chars.length = Math.min(line.chars.length, line.col);
        else if (first === 1) {
          for (let c = 0; c <= line.col && c < line.chars.length; c++) line.chars[c] = " ";
        } else line.chars = [];
        return;
      case "G":
        line.col = (first || 1) - 1;
        return;
      case "C":
        line.col += first || 1;
        return;
      case "D":
        line.col = line.col - (first || 1);
        return;
      case "A":
        return this.#up(first || 1);
      case "H":
      case "f": {
        const row = Math.min(first || 1, MAX_ROWS); // Status rows are keyed by row: a bounded number of them.
        if (this.#saved !== null) {
          // Drawing away from the cursor between a save and a restore: a status row.
          this.#statusRow = row;
          this.#status.clear();
          this.#status.col = (param(1) || 1) - 1;
          return;
        }
        this.#sink.screen(null, this.#at);
        if (this.#line.text() !== "") this.#newline();
        // The lines so far are final (their rows were counted from the previous placement); the open line
        // is on `row` now.
        this.release();
        this.#origin = row;
        this.#line.col = (param(1) || 1) - 1;
        return;
      }
      case "J":
        if (first === 2 || first === 3) this.#sink.screen(null, this.#at);
        // Below the cursor (0) when its row is known; otherwise (1: above it, 2 and 3: all) everything.
        this.#sink.erased(first === 0 && this.#origin !== null ? this.#origin + this.#row : undefined);
        return;
      case "r":
        return this.#sink.statusEnd();
      case "s":
        return this.#save();
      case "u":
        return this.#restore();
      case "h":
      case "l":
        if (privateMode && params.some((p) => p === 1049 || p === 1047 || p === 47)) {
          if (final === "l") this.#origin = null; // Back to line output: rows are not known any more.
          this.#sink.screen(final === "h", this.#at);
        }
        return;
      default:
        return; // Scroll regions, insert/delete, reports: nothing to show in a line view.
    }
  }

  /** Cursor up `n` rows: into the held lines when they are still held (a multi-line progress display). */
  #up(n: number): void {
    if (this.#statusRow !== null) return;
    const target = Math.max(0, this.#row - n);
    if (target === this.#row) return;
    if (this.#row < this.#held.length) this.#held[this.#row] = this.#line.chars;
    else if (this.#line.text() !== "") this.#held.push(this.#line.chars);
    this.#row = target;
    this.#line.adopt(this.#held[target]!);
  }

  #save(): void {
    this.#saved = { chars: [...this.#line.chars], col: this.#line.col };
  }

  #restore(): void {
    const saved = this.#saved;
    this.#endStatus();
    if (saved !== null) this.#line.col = saved.col;
    this.#saved = null;
  }
}

/**
 * A line's screen row as the sink gets it: rows past the tallest screen are not rows of a screen (a program
 * that placed the cursor once and then printed a long log), and keeping them apart would let hostile output
 * grow the compact view's table of rows without bound.
 */
function rowOf(row: number | null): number | undefined {
  return row === null || row > MAX_ROWS ? undefined : row;
}

/** A line's text: its characters, trailing blanks dropped. */
function textOf(chars: readonly string[]): string {
  return chars.join("").trimEnd();
}

/**
 * The index just past the escape sequence starting at `at`, or -1 when the input ends before it does.
 * CSI ends at a final byte; OSC at BEL or ST; DCS, SOS, PM and APC at ST; others after one or two bytes.
 */
function escapeEnd(input: string, at: number): number {
  const n = input.length;
  if (at + 1 >= n) return -1;
  const kind = input.charCodeAt(at + 1);
  if (kind === 0x5b) { // CSI
    for (let i = at + 2; i < n; i++) {
      const c = input.charCodeAt(i);
      if (c >= 0x40 && c <= 0x7e) return i + 1;
      if (c < 0x20 || c > 0x7e) return i; // Malformed: end it here, the byte is read as itself.
    }
    return -1;
  }
  if (kind === 0x5d || kind === 0x50 || kind === 0x58 || kind === 0x5e || kind === 0x5f) { // OSC DCS SOS PM APC
    for (let i = at + 2; i < n; i++) {
      const c = input.charCodeAt(i);
      if (c === 0x07 && kind === 0x5d) return i + 1;
      if (c === ESC) {
        if (i + 1 >= n) return -1;
        // ST (ESC \) ends it; any other ESC ends it too and starts a sequence of its own.
        return input.charCodeAt(i + 1) === 0x5c ? i + 2 : i;
      }
    }
    return -1;
  }
  if (kind >= 0x20 && kind <= 0x2f) { // ESC ( B and other intermediates: one more byte.
    return at + 2 < n ? at + 3 : -1;
  }
  return at + 2;
}
