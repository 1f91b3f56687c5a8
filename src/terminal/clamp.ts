/**
 * `CsiClamp`: a streaming filter that clamps the count parameter of the control sequences whose cost in
 * the terminal model grows with the count, before they reach it.
 *
 * xterm loops once per unit of count for REP (`CSI n b`), IL/DL (`CSI n L`/`M`), SU/SD (`CSI n S`/`T`)
 * and CHT/CBT (`CSI n I`/`Z`), and parses each write without yielding: one `CSI 2147483647 L` kept the
 * event loop busy for minutes, so neither `--timeout` nor any other timer could fire. A count above the
 * screen size draws the same screen as the screen size, so clamping changes nothing visible:
 *
 * - IL, DL, SU, SD: at most `rows` (every line of the scroll region is already replaced).
 * - CHT, CBT: at most `cols` (each step moves at least one column, and stops at the margin).
 * - REP: above `(2 × rows + 3) × cols` repetitions the scroll region is filled with the character and
 *   each further line of it scrolls one identical line in, so the count is reduced modulo the number of
 *   characters per line (for narrow and wide characters alike): the screen and the cursor are exactly
 *   those of the full count (with scrollback 0, which is what sessions use).
 *
 * Every other count (cursor moves, erases, ICH/DCH/ECH, margins) xterm already clamps to the screen, and
 * other sequences pass through unchanged. The state machine follows xterm's parser where it matters:
 * `ESC [` and C1 `U+009B` start a sequence from any state (over-approximating is harmless: a sequence that
 * xterm does not see as one is only rewritten when it looks like a hostile count), C0 controls inside a
 * sequence run at once (so they are passed on before it), CAN/SUB/ESC and other characters abort it.
 * A sequence longer than {@link MAX_SEQUENCE} units is dropped whole: no legitimate program sends one, and
 * holding it would be unbounded memory.
 *
 * @module
 */

/** Longest control sequence held back while waiting for its final byte (units); longer ones are dropped. */
export const MAX_SEQUENCE = 1024;

/** The largest parameter xterm keeps (it saturates there). */
const PARAM_MAX = 0x7fffffff;

/** The sequences whose count is clamped, by final byte, and what bounds it. */
export const CLAMPED = {
  b: "rep",
  L: "rows",
  M: "rows",
  S: "rows",
  T: "rows",
  I: "cols",
  Z: "cols",
} as const satisfies Record<string, "rep" | "rows" | "cols">;

/** The screen size at this point of the output stream. */
export interface ClampSize {
  readonly cols: number;
  readonly rows: number;
}

const enum State {
  Ground,
  /** The previous character was ESC. */
  Escape,
  /** Inside a control sequence, collected in `#sequence`. */
  Sequence,
  /** Inside a control sequence that grew too long: dropped up to its final byte. */
  Dropping,
}

// deno-lint-ignore no-control-regex -- ESC and C1 CSI are exactly what is searched for.
const INTRODUCERS = /[\x1b\x9b]/g;
/** A complete sequence made only of parameter/intermediate bytes, and its final byte. */
// deno-lint-ignore no-control-regex -- as above.
const WHOLE = /(?:\x1b\[|\x9b)[\x20-\x3f]*([\x40-\x7e])/y;

/**
 * Estimated parsing work, in units of one printed character (~50 ns): measured on xterm 6 (80×24), each
 * weight rounded up. A plain character costs 1, a cheap sequence {@link BASE_COST}; the ones that touch
 * whole lines or the whole screen cost in proportion (a full reset ~90 µs, IL 24 ~100 µs, an erase of
 * the screen ~5 µs, switching to the alternate screen ~20 µs).
 */
export const BASE_COST = 8;

/** Final bytes of control sequences that may cost more than {@link BASE_COST}. */
const HEAVY: Readonly<Record<string, true>> = {
  b: true,
  L: true,
  M: true,
  S: true,
  T: true,
  J: true,
  h: true,
  l: true,
  "}": true,
  "~": true,
  "@": true,
  A: true,
};

/** The work of an escape sequence `ESC <code>` that is not a control sequence. */
function escapeCost(code: number, size: ClampSize): number {
  const area = Math.max(1, size.cols) * Math.max(1, size.rows);
  if (code === 0x63) return area; // RIS: a full reset.
  if (code === 0x4d || code === 0x44 || code === 0x45) return Math.max(1, size.cols); // RI, IND, NEL.
  if (code === 0x23) return Math.ceil(area / 8); // DECALN (ESC # 8) and its siblings.
  return BASE_COST;
}

/** The work of control sequence `sequence` (introducer and parameters) + `final`, count already clamped. */
export function costOf(sequence: string, final: string, size: ClampSize): number {
  const cols = Math.max(1, size.cols);
  const area = cols * Math.max(1, size.rows);
  const start = sequence.charCodeAt(0) === 0x9b ? 1 : 2;
  const prefix = start < sequence.length ? sequence.charCodeAt(start) : 0;
  const last = sequence.length > start ? sequence.charCodeAt(sequence.length - 1) : 0;
  const intermediate = last >= 0x20 && last <= 0x2f ? last : 0;
  if (prefix >= 0x3c && prefix <= 0x3f) {
    if (intermediate !== 0) return BASE_COST;
    if (final === "h" || final === "l") return Math.ceil(area / 4); // DECSET: the alternate screen.
    if (final === "J") return Math.ceil(area / 16); // DECSED.
    return BASE_COST;
  }
  if (intermediate === 0x27 && (final === "}" || final === "~")) return Math.ceil(area / 16); // DECIC/DC
  if (intermediate === 0x20 && (final === "@" || final === "A")) return Math.ceil(area / 16); // SL/SR
  if (intermediate !== 0) return BASE_COST;
  if (final === "J") return Math.ceil(area / 16);
  if (!(final in CLAMPED)) return BASE_COST;
  let count = 0;
  for (let k = start; k < sequence.length; k++) {
    const code = sequence.charCodeAt(k);
    if (code < 0x30 || code > 0x39) break;
    count = Math.min(PARAM_MAX, count * 10 + code - 0x30);
  }
  count = Math.max(1, count);
  if (final === "b") return BASE_COST + count;
  if (final === "I" || final === "Z") return BASE_COST;
  return BASE_COST + count * cols; // IL, DL, SU, SD: each line is moved or blanked.
}

/** The clamped count of a sequence (see the module documentation), or `count` when it is harmless. */
export function clampCount(kind: "rep" | "rows" | "cols", count: number, size: ClampSize): number {
  const cols = Math.max(1, size.cols);
  const rows = Math.max(1, size.rows);
  if (kind === "rows") return Math.min(count, rows);
  if (kind === "cols") return Math.min(count, cols);
  const filled = (2 * rows + 3) * cols;
  if (count <= filled) return count;
  // Characters per line: `cols` narrow ones or `floor(cols / 2)` wide ones; a period of both.
  const period = lcm(cols, Math.max(1, Math.floor(cols / 2)));
  return filled + ((count - filled) % period);
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

function lcm(a: number, b: number): number {
  return (a / gcd(a, b)) * b;
}

/** The streaming filter of one output stream (keeps state across chunk boundaries). */
export class CsiClamp {
  #state = State.Ground;
  #extra = 0;
  /** The sequence being collected (introducer included, DEL left out). */
  #sequence = "";

  /** True while part of a sequence is held back (it is written once complete). */
  get holding(): boolean {
    return this.#state === State.Sequence || this.#state === State.Escape;
  }

  /**
   * The estimated parsing work of the last {@link feed} beyond one unit per character (see
   * {@link costOf}): with it a backlog is bounded in time, not only in characters.
   */
  get extra(): number {
    return this.#extra;
  }

  /** Filters the next chunk of output; `size` is the screen size that this chunk is drawn for. */
  feed(text: string, size: ClampSize): string {
    this.#extra = 0;
    let out = "";
    let i = 0;
    const n = text.length;
    while (i < n) {
      if (this.#state === State.Ground) {
        // Text and complete harmless sequences are passed on as they are, in one piece.
        let from = i;
        let found: RegExpExecArray | null;
        for (;;) {
          INTRODUCERS.lastIndex = from;
          found = INTRODUCERS.exec(text);
          if (found === null) break;
          WHOLE.lastIndex = found.index;
          const whole = WHOLE.exec(text);
          if (whole === null || whole[1]! in CLAMPED) break;
          from = WHOLE.lastIndex;
          const final = whole[1]!;
          this.#extra += final in HEAVY ? costOf(text.slice(found.index, from - 1), final, size) : BASE_COST;
        }
        if (found === null) {
          out += i === 0 ? text : text.slice(i);
          break;
        }
        out += text.slice(i, found.index);
        i = found.index + 1;
        if (text.charCodeAt(found.index) === 0x9b) this.#begin("\x9b");
        else this.#state = State.Escape;
        continue;
      }
      const code = text.charCodeAt(i);
      if (this.#state === State.Escape) {
        if (code === 0x5b) {
          i++;
          this.#begin("\x1b[");
        } else {
          // Not a control sequence: the ESC goes on, the character is handled from the ground state
          // (another ESC keeps this state: only the last one counts).
          out += "\x1b";
          if (code === 0x1b) i++;
          else {
            this.#state = State.Ground;
            this.#extra += escapeCost(code, size);
          }
        }
        continue;
      }
      // Inside a sequence (collected or dropped).
      if (code >= 0x20 && code <= 0x3f) {
        if (this.#state === State.Sequence) {
          this.#sequence += text[i];
          if (this.#sequence.length > MAX_SEQUENCE) {
            this.#sequence = "";
            this.#state = State.Dropping;
          }
        }
        i++;
      } else if (code >= 0x40 && code <= 0x7e) {
        if (this.#state === State.Sequence) {
          const sequence = rewrite(this.#sequence, text[i]!, size);
          this.#extra += costOf(sequence.slice(0, -1), text[i]!, size);
          out += sequence;
        }
        this.#sequence = "";
        this.#state = State.Ground;
        i++;
      } else if (code === 0x7f) {
        i++; // Ignored by the terminal inside a sequence.
      } else if (code < 0x20 && code !== 0x18 && code !== 0x1a && code !== 0x1b) {
        // Executed at once, and the sequence goes on: pass it on before the sequence.
        out += text[i];
        i++;
      } else {
        // CAN, SUB, ESC, a C1 control or any other character ends the sequence, which has no effect
        // then; the character itself is handled from the ground state.
        out += this.#sequence;
        this.#sequence = "";
        this.#state = State.Ground;
      }
    }
    return out;
  }

  #begin(introducer: string): void {
    this.#sequence = introducer;
    this.#state = State.Sequence;
  }
}

/** The complete sequence `sequence` + `final`, with its count clamped when it is one of {@link CLAMPED}. */
function rewrite(sequence: string, final: string, size: ClampSize): string {
  const kind = (CLAMPED as Record<string, "rep" | "rows" | "cols" | undefined>)[final];
  if (kind === undefined) return sequence + final;
  const start = sequence.charCodeAt(0) === 0x9b ? 1 : 2;
  // Only `digits [; or : ...]`: a private prefix or an intermediate makes it another (or no) sequence.
  let end = start;
  let count = 0;
  while (end < sequence.length) {
    const code = sequence.charCodeAt(end);
    if (code < 0x30 || code > 0x39) break;
    count = Math.min(PARAM_MAX, count * 10 + code - 0x30);
    end++;
  }
  for (let k = end; k < sequence.length; k++) {
    const code = sequence.charCodeAt(k);
    if (code !== 0x3b && code !== 0x3a && (code < 0x30 || code > 0x39)) return sequence + final;
  }
  if (count <= 1) return sequence + final;
  const clamped = clampCount(kind, count, size);
  if (clamped === count) return sequence + final;
  return sequence.slice(0, start) + String(clamped) + sequence.slice(end) + final;
}
