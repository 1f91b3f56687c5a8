/**
 * `OuterModes`: which modes a session's program switched on in a person's own terminal (through
 * `specter attach`), and the sequence that switches them back when the person leaves: the alternate
 * screen, mouse reporting, application cursor keys and keypad, bracketed paste, focus events, a hidden
 * or reshaped cursor, a scroll region, origin mode, autowrap, insert mode, colours, charsets, keyboard
 * protocols and the window title. Without it a detach out of vim leaves the person's shell prompt drawn
 * on vim's screen, and every click types an escape sequence.
 *
 * It reads the output of an {@link OuterFilter} (what actually reached the terminal): only complete,
 * well-formed sequences in 7-bit form are there, so a pattern per sequence suffices. The terminal is
 * taken to have been in its defaults before (a shell at its prompt is); the title, which has no default,
 * is pushed on entry ({@link OuterModes.ENTER}) and popped on exit where the terminal keeps a title stack
 * (xterm, kitty, foot, tmux 3.4+), and emptied where it does not.
 *
 * @module
 */

/** DEC private modes whose default is set; every other one tracked defaults to reset. */
const DEFAULT_SET = new Set([7, 8, 25]);

/**
 * DEC private modes reset (or set, for {@link DEFAULT_SET}) on exit when the program touched them. Not
 * here: the alternate screens (left only when on, see `#alt`), origin mode 6 (resetting it homes the
 * cursor), 1048 (saves or restores the cursor: no state) and 69 (handled with the margins).
 */
// deno-fmt-ignore -- one mode a line would be 30 lines.
const RESET_MODES = [
  2026, 1, 5, 7, 8, 9, 12, 25, 45, 66, 67, 1000, 1002, 1003, 1004, 1005, 1006, 1007, 1015, 1016,
  1034, 1035, 1036, 1037, 1039, 2004,
];

/** Deepest title stack kept by xterm: more pops than this are pointless. */
const TITLE_STACK = 10;

/** Deepest kitty keyboard stack popped on exit. */
const KEYBOARD_STACK = 32;

const SEQUENCE =
  // deno-lint-ignore no-control-regex -- escape sequences are what is read.
  /\x1b(?:\[([<=>?]?)([0-9;:]*)([ !"$']?)([@-~])|\]([0-9]+);[^\x07\x1b]*(?:\x07|\x1b\\)|([()*+\-./][ -/]?)([0-~])|([0-~]))|\x0e/g;

/** The modes a program set in the outer terminal, read from what reached it. */
export class OuterModes {
  /** Written on entry: pushes the outer terminal's title (XTWINOPS 22), popped by {@link restore}. */
  static readonly ENTER = "\x1b[22;0t";

  /** DEC private modes touched, by number, with the state last set. */
  readonly #dec = new Map<number, boolean>();
  /** ANSI modes (insert 4, newline 20) touched. */
  readonly #ansi = new Set<number>();
  /** The alternate screen mode in force (47, 1047 or 1049), or 0 on the normal screen. */
  #alt = 0;
  #origin = false;
  #margins = false;
  #keypad = false;
  #cursorShape = false;
  #title = false;
  /** Titles the program pushed and has not popped. */
  #titlePushes = 0;
  #keyboardPushes = 0;
  #keyboardSet = false;
  #modifyKeys = false;
  #charset = false;
  /** OSC colour resets owed (104, 105, 110…119). */
  readonly #colours = new Set<number>();

  /** True while the program has the outer terminal on its alternate screen. */
  get altScreen(): boolean {
    return this.#alt !== 0;
  }

  /** Reads the next chunk that reached the outer terminal (an {@link OuterFilter}'s output). */
  observe(text: string): void {
    if (!text.includes("\x1b") && !text.includes("\x0e")) return;
    SEQUENCE.lastIndex = 0;
    for (const m of text.matchAll(SEQUENCE)) {
      if (m[0] === "\x0e") this.#charset = true;
      else if (m[4] !== undefined) this.#csi(m[1]!, m[2]!, m[3]!, m[4]);
      else if (m[5] !== undefined) this.#osc(Number(m[5]));
      else if (m[6] !== undefined) this.#charset = true;
      else if (m[8] !== undefined) this.#escape(m[8]);
    }
  }

  #csi(prefix: string, params: string, intermediate: string, final: string): void {
    const numbers = params.split(";").map((p) => Number(p.split(":")[0] || "0"));
    const key = prefix + intermediate + final;
    if (key === "?h" || key === "?l" || key === "?r") {
      // XTRESTORE (`?r`) restores a value this tracker never saw: taken as set, so that it is reset.
      for (const mode of numbers) this.#decMode(mode, key !== "?l");
    } else if (key === "h" || key === "l") {
      for (const mode of numbers) if (mode === 4 || mode === 20) this.#ansi.add(mode);
    } else if (key === "r") {
      this.#margins = params !== "";
    } else if (key === " q") {
      this.#cursorShape = true;
    } else if (key === "t") {
      if (numbers[0] === 22) this.#titlePushes = Math.min(this.#titlePushes + 1, TITLE_STACK);
      if (numbers[0] === 23) this.#titlePushes = Math.max(this.#titlePushes - 1, 0);
    } else if (key === ">u") {
      this.#keyboardPushes = Math.min(this.#keyboardPushes + 1, KEYBOARD_STACK);
    } else if (key === "<u") {
      this.#keyboardPushes = Math.max(this.#keyboardPushes - Math.max(numbers[0] ?? 1, 1), 0);
    } else if (key === "=u") {
      this.#keyboardSet = true;
    } else if (key === ">m") {
      this.#modifyKeys = true;
    } else if (key === "!p") {
      // DECSTR: a soft reset (origin mode and margins off, among others).
      this.#origin = false;
      this.#margins = false;
    }
  }

  #decMode(mode: number, on: boolean): void {
    if (mode === 47 || mode === 1047 || mode === 1049) {
      this.#alt = on ? mode : 0;
    } else if (mode === 6) {
      this.#origin = on;
    } else if (mode === 69) {
      this.#margins ||= on;
      this.#dec.set(mode, on);
    } else if (mode !== 1048) {
      this.#dec.set(mode, on);
    }
  }

  #osc(command: number): void {
    if (command <= 2) this.#title = true;
    else if (command === 4) this.#colours.add(104);
    else if (command === 5) this.#colours.add(105);
    else if (command >= 10 && command <= 19) this.#colours.add(command + 100);
  }

  #escape(final: string): void {
    if (final === "=") this.#keypad = true;
    else if (final === ">") this.#keypad = false;
    else if (final === "c") {
      // RIS reset the outer terminal whole: nothing the program set before is left (the title aside).
      const title = this.#title;
      const pushes = this.#titlePushes;
      this.#reset();
      this.#title = title;
      this.#titlePushes = pushes;
    }
  }

  #reset(): void {
    this.#dec.clear();
    this.#ansi.clear();
    this.#colours.clear();
    this.#alt = 0;
    this.#origin =
      this.#margins =
      this.#keypad =
      this.#cursorShape =
        false;
    this.#keyboardPushes = 0;
    this.#keyboardSet = this.#modifyKeys = this.#charset = false;
  }

  /**
   * What puts the outer terminal back as it was before {@link ENTER}: every mode the program touched to
   * its default, the alternate screen left, the title popped. Always begins with SGR 0.
   */
  restore(): string {
    let out = "";
    // A synchronized update left open would hold everything below back from the screen.
    if (this.#dec.has(2026)) out += "\x1b[?2026l";
    out += "\x1b[0m";
    if (this.#charset) out += "\x0f\x1b(B";
    const homes = this.#origin || this.#margins;
    if (this.#alt !== 0) {
      // On the alternate screen the cursor may move freely: leaving it puts the normal screen's back.
      if (homes) out += "\x1b[?6l\x1b[?69l\x1b[r";
      out += `\x1b[?${this.#alt}l`;
    } else if (this.#origin) {
      // Resetting origin mode homes the cursor: put it on the last row, where a prompt may follow.
      out += "\x1b[?6l\x1b[?69l\x1b[r\x1b[999;1H";
    } else if (this.#margins) {
      // DECSC/DECRC keep the cursor where it is across the margins' reset (which homes it).
      out += "\x1b7\x1b[?69l\x1b[r\x1b8";
    }
    const dec = RESET_MODES.filter((mode) => this.#dec.has(mode) && mode !== 2026);
    const set = dec.filter((mode) => DEFAULT_SET.has(mode));
    const reset = dec.filter((mode) => !DEFAULT_SET.has(mode));
    if (reset.length > 0) out += `\x1b[?${reset.join(";")}l`;
    if (set.length > 0) out += `\x1b[?${set.join(";")}h`;
    if (this.#keypad) out += "\x1b>";
    for (const mode of this.#ansi) out += `\x1b[${mode}l`;
    if (this.#cursorShape) out += "\x1b[0 q";
    if (this.#keyboardPushes > 0) out += `\x1b[<${this.#keyboardPushes}u`;
    else if (this.#keyboardSet) out += "\x1b[=0;1u";
    if (this.#modifyKeys) out += "\x1b[>4m";
    for (const colour of [...this.#colours].sort((a, b) => a - b)) out += `\x1b]${colour}\x07`;
    if (this.#title) out += "\x1b]0;\x07";
    out += "\x1b[23;0t".repeat(this.#titlePushes + 1);
    return out;
  }
}
