/**
 * `OuterFilter`: what a session's program writes, made fit for a person's own terminal (`specter attach`),
 * as tmux does by drawing its own screen. The program is sandboxed; the person's terminal is not, and it
 * obeys its output: it would set their clipboard (OSC 52), plant links to `file://` or other schemes
 * (OSC 8), put escape sequences into the window title (which some terminals report back), and answer
 * queries (DA, DSR, DECRQM, DECRQSS, XTGETTCAP, colour queries, window reports) by typing the answer into
 * the session: into the program, or, after a detach, into the person's shell.
 *
 * The filter is a streaming parser (xterm's state machine: ground, escape, control sequence, and the
 * strings OSC, DCS, SOS, PM, APC) that passes text and rebuilds each complete sequence the allow-list in
 * `_outer_rules.ts` accepts; the rest is dropped whole:
 *
 * - Text passes, and the C0 controls that draw (BEL, BS, HT, LF, VT, FF, CR, SO, SI); other C0 controls
 *   (ENQ asks for the answerback string), DEL and stray string terminators are dropped.
 * - C1 controls, which arrive as characters U+0080–U+009F of the decoded text, are what a terminal would
 *   take them for: U+009B starts a control sequence, U+009D an OSC, U+0090/U+0098/U+009E/U+009F a
 *   (dropped) string, U+009C ends one; IND, NEL, HTS and RI are passed in their 7-bit forms; the others
 *   (DECID among them) are dropped. No C1 character ever reaches the person's terminal.
 * - Every DCS is dropped (DECRQSS `ESC P $ q`, XTGETTCAP `ESC P + q`, sixel images, tmux passthrough),
 *   as are SOS, PM and APC strings (kitty graphics among them).
 *
 * Queries are dropped, not answered: the session's terminal model does not answer them either, so a
 * program sees the same terminal attached or not (one that waits for an answer times out as it does with
 * no client attached).
 *
 * A sequence may be split across chunks (the state is kept). One held back is bounded by
 * {@link MAX_SEQUENCE} characters ({@link MAX_CLIPBOARD} for a clipboard write that is allowed): a longer
 * one is dropped whole, and only its end is looked for. The output is meant for a UTF-8 terminal, as the
 * session's output is decoded as UTF-8 (a program cannot switch the terminal out of it: `ESC %` is
 * dropped).
 *
 * @module
 */
import { csiRule, escapeRule, oscRule } from "./_outer_rules.ts";

/** Longest sequence held back while waiting for its end (characters); longer ones are dropped whole. */
export const MAX_SEQUENCE = 4096;

/** Longest clipboard write (OSC 52, characters of base64) passed on when the clipboard is allowed. */
export const MAX_CLIPBOARD = 1024 * 1024;

/** How the filter treats what a person may opt into. */
export interface OuterFilterOptions {
  /**
   * Let the program set the clipboard (OSC 52 writes; reading it stays refused). Risky: what it puts
   * there is what the person pastes next, a command with a newline of its own included.
   */
  readonly allowClipboard?: boolean;
}

const enum State {
  Ground,
  /** After ESC: intermediates in `#held`. */
  Escape,
  /** Inside a control sequence: its parameter and intermediate bytes in `#held`. */
  Csi,
  /** Inside an OSC: its payload in `#held`. */
  Osc,
  /** Inside a DCS, SOS, PM or APC string: dropped, nothing held. */
  Dropped,
}

/** Characters of the ground state that are not passed as they are. */
// deno-lint-ignore no-control-regex -- control characters are exactly what is searched for.
const SPECIAL = /[\x00-\x06\x10-\x1f\x7f-\x9f]/g;
/** A run of a string's content (everything but controls). */
// deno-lint-ignore no-control-regex -- as above.
const CONTENT = /[^\x00-\x1f\x7f-\x9f]+/y;

/** C1 controls passed in their 7-bit forms: IND, NEL, HTS, RI. */
const C1_AS_ESCAPE: Readonly<Record<number, string>> = {
  0x84: "\x1bD",
  0x85: "\x1bE",
  0x88: "\x1bH",
  0x8d: "\x1bM",
};

/** The C0 controls that draw: BEL, BS, HT, LF, VT, FF, CR, SO, SI. */
function drawingControl(code: number): boolean {
  return code >= 0x07 && code <= 0x0f;
}

/** The filter of one output stream on its way to a person's terminal (keeps state across chunks). */
export class OuterFilter {
  readonly #allowClipboard: boolean;
  #state = State.Ground;
  #held = "";
  /** The sequence being read grew past its bound: it is dropped at its end. */
  #overlong = false;
  /** Inside a string, the last character was ESC (a string terminator, ESC `\`, may be coming). */
  #stringEscape = false;

  constructor(options: OuterFilterOptions = {}) {
    this.#allowClipboard = options.allowClipboard === true;
  }

  /** True while part of a sequence is held back (or a dropped one has not ended yet). */
  get holding(): boolean {
    return this.#state !== State.Ground;
  }

  /** Filters the next chunk of output. */
  feed(text: string): string {
    let out = "";
    let i = 0;
    const n = text.length;
    while (i < n) {
      if (this.#state === State.Ground) {
        SPECIAL.lastIndex = i;
        const found = SPECIAL.exec(text);
        if (found === null) {
          out += i === 0 ? text : text.slice(i);
          break;
        }
        out += text.slice(i, found.index) + this.#ground(text.charCodeAt(found.index));
        i = found.index + 1;
        continue;
      }
      if (this.#state === State.Osc || this.#state === State.Dropped) {
        const [pass, next] = this.#string(text, i);
        out += pass;
        i = next;
        continue;
      }
      const code = text.charCodeAt(i);
      if (code === 0x1b) {
        this.#begin(State.Escape); // An ESC in a sequence abandons it and starts another.
      } else if (code === 0x18 || code === 0x1a) {
        this.#state = State.Ground; // CAN and SUB abandon it.
      } else if (code === 0x7f) {
        // Ignored inside a sequence.
      } else if (code < 0x20) {
        // Executed at once, and the sequence goes on.
        if (drawingControl(code)) out += text[i];
      } else if (code >= 0x80) {
        this.#state = State.Ground; // Not part of a sequence: it is abandoned, the character read anew.
        continue;
      } else if (this.#state === State.Escape) {
        out += this.#escape(code, text[i]!);
      } else if (code <= 0x3f) {
        this.#hold(text[i]!, MAX_SEQUENCE);
      } else {
        if (!this.#overlong) out += csiRule(this.#held, text[i]!) ?? "";
        this.#state = State.Ground;
      }
      i++;
    }
    return out;
  }

  /** A special character of the ground state: what is passed for it. */
  #ground(code: number): string {
    switch (code) {
      case 0x1b:
        this.#begin(State.Escape);
        return "";
      case 0x9b:
        this.#begin(State.Csi);
        return "";
      case 0x9d:
        this.#begin(State.Osc);
        return "";
      case 0x90:
      case 0x98:
      case 0x9e:
      case 0x9f:
        this.#begin(State.Dropped);
        return "";
      default:
        return C1_AS_ESCAPE[code] ?? "";
    }
  }

  /** The character `ch` (`code`, printable ASCII) after ESC and any intermediates. */
  #escape(code: number, ch: string): string {
    if (code <= 0x2f) {
      this.#hold(ch, MAX_SEQUENCE);
      return "";
    }
    const intermediates = this.#held;
    this.#state = State.Ground;
    if (this.#overlong) return "";
    if (intermediates === "") {
      if (ch === "[") this.#begin(State.Csi);
      else if (ch === "]") this.#begin(State.Osc);
      else if (ch === "P" || ch === "X" || ch === "^" || ch === "_") this.#begin(State.Dropped);
      else return escapeRule("", ch) ?? "";
      return "";
    }
    return escapeRule(intermediates, ch) ?? "";
  }

  /** Reads a string (OSC or dropped) from `text[i]`: what is passed, and where reading goes on. */
  #string(text: string, i: number): [string, number] {
    const code = text.charCodeAt(i);
    if (this.#stringEscape) {
      this.#stringEscape = false;
      if (code === 0x5c) return [this.#endString("\x1b\\"), i + 1];
      // Not a terminator: the string is abandoned, and the ESC starts a sequence of its own.
      this.#begin(State.Escape);
      return ["", i];
    }
    if (code === 0x1b) {
      this.#stringEscape = true;
      return ["", i + 1];
    }
    if (code === 0x9c || (code === 0x07 && this.#state === State.Osc)) {
      return [this.#endString(code === 0x07 ? "\x07" : "\x1b\\"), i + 1];
    }
    if (code === 0x18 || code === 0x1a) {
      this.#state = State.Ground;
      return ["", i + 1];
    }
    if (code >= 0x80 && code <= 0x9f) {
      this.#state = State.Ground; // Another C1 control abandons the string; it is read anew.
      return ["", i];
    }
    if (code < 0x20 || code === 0x7f) return ["", i + 1]; // Ignored inside a string, as xterm does.
    CONTENT.lastIndex = i;
    CONTENT.exec(text);
    const end = CONTENT.lastIndex;
    if (this.#state === State.Osc) {
      const head = this.#held.length >= 3 ? this.#held : this.#held + text.slice(i, i + 3);
      const limit = this.#allowClipboard && head.startsWith("52;") ? MAX_CLIPBOARD : MAX_SEQUENCE;
      this.#hold(text.slice(i, end), limit);
    }
    return ["", end];
  }

  #endString(terminator: string): string {
    const osc = this.#state === State.Osc && !this.#overlong;
    this.#state = State.Ground;
    return osc ? oscRule(this.#held, terminator, this.#allowClipboard) ?? "" : "";
  }

  #begin(state: State): void {
    this.#state = state;
    this.#held = "";
    this.#overlong = false;
    this.#stringEscape = false;
  }

  /** Holds `part` of the sequence being read, unless that takes it past `limit` (then it is dropped). */
  #hold(part: string, limit: number): void {
    if (this.#overlong) return;
    if (this.#held.length + part.length > limit) {
      this.#held = "";
      this.#overlong = true;
      return;
    }
    this.#held += part;
  }
}
