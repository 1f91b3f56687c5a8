/**
 * A cheap model of the end of a program's output: the last N lines and the current line, with ANSI
 * sequences removed and carriage returns, backspaces and erase-line applied. It feeds `exit.last_lines`
 * and `prompt` matching without a full terminal emulator.
 *
 * Work per chunk is bounded by the tail that matters: lines that scroll out of the ring are skipped.
 *
 * @module
 */

/** Longest line kept, in UTF-16 code units (the tail of longer lines is kept). */
export const MAX_LINE = 4096;
const MAX_PENDING_ESCAPE = 4096;

/** A control sequence's parameter byte (`0`–`?`); compared by code, as this runs for every byte read. */
function isParameter(code: number): boolean {
  return code >= 0x30 && code <= 0x3f;
}

/** An intermediate byte (space to `/`). */
function isIntermediate(code: number): boolean {
  return code >= 0x20 && code <= 0x2f;
}

/** Tracks the last lines of output. */
export class OutputTail {
  #capacity: number;
  #lines: string[] = [];
  #line = "";
  #col = 0;
  #pending = "";
  #sawOutput = false;

  /** Keeps the last `capacity` completed lines (≥ 1). */
  constructor(capacity: number) {
    this.#capacity = Math.max(1, capacity);
  }

  /** Feeds decoded output text. */
  push(text: string): void {
    if (text.length === 0) return;
    this.#sawOutput = true;
    // Lines before the last `capacity + 1` newlines would scroll out of the ring: skip them. Looked for in
    // the new text first: when it has that many, an escape sequence pending from the last chunk goes with
    // them, and is never joined to the text (a joined string is copied whole on the first search, a byte
    // per byte of output when a flood of colours cuts sequences at every read).
    const rest = this.#afterSkipped(text);
    if (rest !== null) {
      this.#pending = "";
      this.#scan(rest);
      return;
    }
    const input = this.#pending + text;
    this.#pending = "";
    this.#scan(this.#afterSkipped(input) ?? input);
  }

  /**
   * What follows the last `capacity + 1` newlines of `input` (the lines before would scroll out of the
   * ring: they are dropped, with the ring), or null when it has fewer. This runs on the reading thread for
   * every chunk, so it uses the native lastIndexOf, not a JS loop.
   */
  #afterSkipped(input: string): string | null {
    let at = input.length;
    for (let newlines = 0; at > 0; newlines++) {
      const nl = input.lastIndexOf("\n", at - 1);
      if (nl < 0) return null;
      if (newlines === this.#capacity) {
        this.#lines = [];
        this.#line = "";
        this.#col = 0;
        return input.slice(nl + 1);
      }
      at = nl;
    }
    return null;
  }

  /** The current (unfinished) line, ANSI-stripped. */
  get currentLine(): string {
    return this.#line;
  }

  /** The last `n` lines (completed ones plus a non-empty current line), trailing blanks trimmed. */
  lastLines(n: number = this.#capacity): string[] {
    if (!this.#sawOutput) return [];
    const all = this.#line.trimEnd() === "" ? [...this.#lines] : [...this.#lines, this.#line];
    const lines = all.map((line) => line.trimEnd());
    while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
    return lines.slice(-n);
  }

  #newline(): void {
    this.#lines.push(this.#line);
    if (this.#lines.length > this.#capacity) this.#lines.shift();
    this.#line = "";
    this.#col = 0;
  }

  #write(text: string): void {
    const line = this.#line;
    if (this.#col >= line.length) {
      this.#line = line + " ".repeat(this.#col - line.length) + text;
    } else {
      this.#line = line.slice(0, this.#col) + text + line.slice(this.#col + text.length);
    }
    this.#col += text.length;
    if (this.#line.length > MAX_LINE) {
      const cut = this.#line.length - MAX_LINE;
      this.#line = this.#line.slice(cut);
      this.#col = Math.max(0, this.#col - cut);
    }
  }

  #csi(params: string, final: string): void {
    const n = Math.max(1, Number.parseInt(params, 10) || 1);
    switch (final) {
      case "K": // Erase in line: 0 to the end, 1 to the start, 2 all.
        if (params === "" || params === "0") this.#line = this.#line.slice(0, this.#col);
        else if (params === "2") this.#line = "";
        else this.#line = " ".repeat(Math.min(this.#col, this.#line.length)) + this.#line.slice(this.#col);
        break;
      // Columns past the longest kept line change nothing but would cost a string that long (and
      // `CSI 2147483647 C` one longer than a string can be).
      case "G":
        this.#col = Math.min(n - 1, MAX_LINE);
        break;
      case "C":
        this.#col = Math.min(this.#col + n, MAX_LINE);
        break;
      case "D":
        this.#col = Math.max(0, this.#col - n);
        break;
      default:
        break; // Colours, modes and cursor moves to other lines do not change the line text.
    }
  }

  #scan(input: string): void {
    const length = input.length;
    let i = 0;
    while (i < length) {
      const code = input.charCodeAt(i);
      if (code >= 0x20 && code !== 0x7f) {
        let end = i + 1;
        while (end < length) {
          const c = input.charCodeAt(end);
          if (c < 0x20 || c === 0x7f) break;
          end++;
        }
        this.#write(input.slice(i, end));
        i = end;
        continue;
      }
      if (code === 0x1b) {
        const consumed = this.#escape(input, i);
        if (consumed < 0) {
          const rest = input.slice(i);
          if (rest.length <= MAX_PENDING_ESCAPE) this.#pending = rest;
          return;
        }
        i += consumed;
        continue;
      }
      if (code === 10) this.#newline();
      else if (code === 13) this.#col = 0;
      else if (code === 8) this.#col = Math.max(0, this.#col - 1);
      else if (code === 9) {
        // A run of tabs is one write to the last tab stop (a tab at a time rebuilt the line per tab: 600 ms
        // per MiB of tabs). Past the kept line's length the spaces cut the same either way.
        let end = i + 1;
        while (end < length && input.charCodeAt(end) === 9) end++;
        const advance = (end - i) * 8 - (this.#col % 8);
        this.#write(" ".repeat(Math.min(advance, MAX_LINE)));
        i = end;
        continue;
      }
      i++;
    }
  }

  /** Handles the escape sequence at `start`; returns its length, or -1 when it is incomplete. */
  #escape(input: string, start: number): number {
    const next = input[start + 1];
    if (next === undefined) return -1;
    if (next === "[") {
      let j = start + 2;
      while (j < input.length && isParameter(input.charCodeAt(j))) j++;
      const params = input.slice(start + 2, j);
      while (j < input.length && isIntermediate(input.charCodeAt(j))) j++;
      if (j >= input.length) return -1;
      this.#csi(params, input[j]!);
      return j + 1 - start;
    }
    if (next === "]" || next === "P" || next === "X" || next === "^" || next === "_") {
      // OSC ends at BEL or ST (ESC \); DCS, SOS, PM and APC at ST.
      for (let j = start + 2; j < input.length; j++) {
        if (input[j] === "\x07" && next === "]") return j + 1 - start;
        if (input[j] === "\x1b") {
          if (j + 1 >= input.length) return -1;
          if (input[j + 1] === "\\") return j + 2 - start;
        }
      }
      return -1;
    }
    // ESC, optional intermediates, final byte (e.g. ESC ( B, ESC =, ESC 7).
    let j = start + 1;
    while (j < input.length && isIntermediate(input.charCodeAt(j))) j++;
    return j >= input.length ? -1 : j + 1 - start;
  }
}

/** Follows DECCKM (`ESC [ ? 1 h` / `ESC [ ? 1 l`) in output, so keys can be encoded for the mode. */
export class CursorKeyMode {
  #application = false;
  #tail = "";

  /** True when the program switched on application cursor keys. */
  get application(): boolean {
    return this.#application;
  }

  /** Feeds decoded output text. */
  push(text: string): void {
    // Most chunks have no escape at all: one native scan, no string building (this runs per chunk).
    if (this.#tail === "" && !text.includes("\x1b")) return;
    // The tail joins only the start of the text (at most 16 characters are carried): joined to all of it,
    // the first search would copy the whole chunk, a byte per byte of a flood of colours.
    const joined = this.#tail === "" ? "" : this.#tail + text.slice(0, 64);
    this.#tail = "";
    for (const input of [joined, text]) {
      if (!input.includes("\x1b[?")) continue;
      // deno-lint-ignore no-control-regex -- ESC is what DECCKM sequences start with
      for (const match of input.matchAll(/\x1b\[\?([0-9;]*)([hl])/g)) {
        if (match[1]!.split(";").includes("1")) this.#application = match[2] === "h";
      }
    }
    // A sequence split across chunks is seen whole next time (re-applying one is harmless).
    const input = text.length >= 16 ? text : joined.length > 0 ? joined : text;
    const esc = input.lastIndexOf("\x1b");
    if (esc >= 0 && input.length - esc < 16) this.#tail = input.slice(esc);
  }
}
