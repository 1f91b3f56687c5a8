/**
 * `PlainTextStream`: {@link plainText} for output that arrives in pieces and is too large to hold twice.
 * Its result is exactly `plainText` of all the pieces joined (the tests compare them on random cuts), but it
 * never holds the whole text: it works on UTF-8 bytes, writes what it is sure of to a sink as it comes, and
 * takes a line redrawn with a carriage return back from the sink instead of holding it until its newline.
 * Held back: only an escape sequence not finished yet, and carriage returns not followed by anything yet.
 *
 * Why bytes: `yes` on a terminal writes a million `y\r\n` lines in 3 MB. Made plain as strings, every line
 * costs a string or two (`replaceAll` of `\r\n` alone allocated 22 bytes per byte of output); as bytes,
 * the text is encoded once and compacted where it lies. Everything `plainText` looks at (ESC, the bytes of
 * sequences, control characters, CR, LF) is ASCII, and every other character is "anything else" to it, so
 * its rules read the same on valid UTF-8 as on UTF-16: the input is always valid UTF-8, encoded from text.
 *
 * @module
 */

/** Where a {@link PlainTextStream} writes: bytes appended in order; the current line can be taken back. */
export interface PlainTextSink {
  /** Appends bytes (only read during the call). */
  appendBytes(bytes: Uint8Array): void;
  /** Bytes written so far: a place {@link truncate} can go back to. */
  readonly length: number;
  /** Drops every byte after the first `length`. */
  truncate(length: number): void;
}

// Where the stripper is: between sequences, or inside one (after its ESC). The states follow `stripAnsi`'s
// regex, whose alternatives are tried in this order at an ESC:
//   CSI `ESC [ [0-?]* [ -/]* [@-~]`, OSC `ESC ] [^BEL ESC]* (BEL | ESC \)`, `ESC [PX^_] [^ESC]* ESC \`,
//   `ESC [ -/]* [0-~]`, and a lone control character (ESC among them).
const TEXT = 0;
const ESC = 1; // ESC seen, nothing after it yet.
const CSI_PARAMS = 2; // ESC [ and parameter bytes.
const CSI_INTERMEDIATES = 3; // … then intermediate bytes.
const OSC = 4; // ESC ] up to BEL or ST.
const OSC_ESC = 5; // … and an ESC that may start its ST.
const STRING = 6; // ESC P, X, ^ or _ (DCS, SOS, PM, APC) up to ST.
const STRING_ESC = 7; // … and an ESC that may start its ST.
const ESC_INTERMEDIATES = 8; // ESC and intermediate bytes, waiting for a final byte (ESC ( B).

/**
 * Where the regex goes on when a sequence turns out not to be one (or the output ends inside it), counted
 * from its ESC: it takes `ESC [`, `ESC ]`, `ESC P`… as a two-byte sequence, or the ESC alone as a control
 * character, and reads on from there as text.
 */
const RESCAN_FROM = [0, 1, 2, 2, 2, 2, 2, 2, 1];

const BYTE_ESC = 0x1b;
/** Bytes encoded and scanned at a time. */
const WORK_BYTES = 64 * 1024;

const encoder = new TextEncoder();

/**
 * {@link plainText} as a stream into a {@link PlainTextSink}: ANSI stripped, `\r\n` → `\n`, and of a line
 * rewritten with `\r` only the last state kept. Call {@link push} with each piece of output (decoded text,
 * in order) and {@link end} once; the sink then holds `plainText` of the whole, as UTF-8.
 */
export class PlainTextStream {
  readonly #sink: PlainTextSink;
  /** Bytes being scanned; from 0 the sequence not finished yet (`#held` bytes), then the new piece. */
  #work = new Uint8Array(WORK_BYTES);
  #held = 0;
  #state = TEXT;
  /** Where the current line starts in the sink. */
  #lineStart: number;
  /** Carriage returns after the current line's last byte, not written (yet). */
  #returns = 0;
  /** The first half of a surrogate pair that ended the last piece. */
  #surrogate = "";

  /** Writes into `sink` (from its current length on). */
  constructor(sink: PlainTextSink) {
    this.#sink = sink;
    this.#lineStart = sink.length;
  }

  /** Takes the next piece of output. */
  push(text: string): void {
    let rest = this.#surrogate + text;
    this.#surrogate = "";
    // A piece cut between the halves of a surrogate pair: the first half waits for the second.
    const last = rest.charCodeAt(rest.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.#surrogate = rest.slice(-1);
      rest = rest.slice(0, -1);
    }
    this.#encode(rest);
  }

  /** Encodes `text` into the buffer after the held bytes, and scans it, in pieces. */
  #encode(text: string): void {
    let rest = text;
    while (rest.length > 0) {
      // Room for at least a character and the piece's share: a sequence held long grows the buffer.
      if (this.#work.length - this.#held < WORK_BYTES) this.#grow(this.#held + WORK_BYTES);
      const { read, written } = encoder.encodeInto(rest, this.#work.subarray(this.#held));
      this.#scan(this.#held, this.#held + written, false);
      rest = read === rest.length ? "" : rest.slice(read);
    }
  }

  /** The output ended. */
  end(): void {
    // A half of a pair that no other half followed: U+FFFD (UTF-8 has no half characters).
    this.#encode(this.#surrogate);
    this.#surrogate = "";
    // A sequence left unfinished is what the regex makes of it at the end of the text (this may end in
    // another: an unfinished OSC's last ESC; its own end then follows).
    while (this.#state !== TEXT) this.#scan(this.#held, this.#held, true);
    // The last line keeps its text unless two carriage returns end it (`plainText`'s rule for it).
    if (this.#returns >= 2) this.#sink.truncate(this.#lineStart);
    this.#returns = 0;
  }

  /**
   * Scans `work[from, to)` (after `#held` bytes of an unfinished sequence, already scanned), compacting
   * the output in place (it is never longer than what was read), then hands it to the sink. With `ended`,
   * the sequence being scanned is not one.
   */
  #scan(from: number, to: number, ended: boolean): void {
    const work = this.#work;
    const sink = this.#sink;
    let base = sink.length; // Where work[0] goes in the sink.
    let w = 0;
    let state = this.#state;
    let returns = this.#returns;
    let lineStart = this.#lineStart;
    let seq = 0; // Where the sequence being read starts (a held one starts the buffer).
    let r = from;
    for (;;) {
      if (r >= to) {
        if (!ended || state === TEXT) break;
        ended = false; // The output ends here: the regex reads on after the sequence's start.
        r = seq + RESCAN_FROM[state]!;
        state = TEXT;
        continue;
      }
      const b = work[r]!;
      let rescan = -1;
      switch (state) {
        case TEXT:
          if (b === BYTE_ESC) {
            state = ESC;
            seq = r;
            break;
          }
          // Control characters other than tab, LF and CR go (ESC is handled above).
          if (b < 0x20 ? b !== 0x09 && b !== 0x0a && b !== 0x0d : b === 0x7f) break;
          if (b === 0x0d) {
            returns++;
            break;
          }
          if (returns > 0) {
            // Before a newline, carriage returns are dropped; before text, the line so far is redrawn.
            if (b !== 0x0a) {
              if (lineStart >= base) {
                w = lineStart - base;
              } else {
                sink.truncate(lineStart);
                base = lineStart;
                w = 0;
              }
            }
            returns = 0;
          }
          work[w++] = b;
          if (b === 0x0a) lineStart = base + w;
          break;
        case ESC:
          if (b === 0x5b) state = CSI_PARAMS;
          else if (b === 0x5d) state = OSC;
          else if (b === 0x50 || b === 0x58 || b === 0x5e || b === 0x5f) state = STRING;
          else if (b >= 0x20 && b <= 0x2f) state = ESC_INTERMEDIATES;
          else if (b >= 0x30 && b <= 0x7e) state = TEXT; // ESC and a final byte: a whole sequence.
          else rescan = 1; // Nothing can follow: the ESC alone is a control character.
          break;
        case CSI_PARAMS:
        case CSI_INTERMEDIATES:
          // Parameters, then intermediates, then the final byte; a parameter after an intermediate ends it.
          if (b >= 0x30 && b <= 0x3f && state === CSI_PARAMS) break;
          if (b >= 0x20 && b <= 0x2f) state = CSI_INTERMEDIATES;
          else if (b >= 0x40 && b <= 0x7e) state = TEXT;
          else rescan = 2;
          break;
        case OSC:
          if (b === 0x07) state = TEXT;
          else if (b === BYTE_ESC) state = OSC_ESC;
          break;
        case STRING:
          if (b === BYTE_ESC) state = STRING_ESC;
          break;
        case OSC_ESC:
        case STRING_ESC:
          // ST ends it; anything else: it was not one, and its last ESC starts a sequence of its own.
          if (b === 0x5c) state = TEXT;
          else rescan = 2;
          break;
        case ESC_INTERMEDIATES:
          if (b >= 0x30 && b <= 0x7e) state = TEXT;
          else if (b < 0x20 || b > 0x2f) rescan = 1;
          break;
        default:
          throw new Error(`Unknown stripper state ${state}`);
      }
      if (rescan >= 0) {
        // Not a sequence: the regex takes its first bytes alone and reads on from there as text (what
        // follows them holds no ESC but, for an OSC or DCS, the one that ended it). Each byte is read twice
        // at most.
        state = TEXT;
        r = seq + rescan;
        continue;
      }
      r++;
    }
    // The output is work[0, w) (never past `seq`: it was read before); an unfinished sequence moves to the
    // front (only what this piece added to it: one held from before is there already).
    if (w > 0) sink.appendBytes(work.subarray(0, w));
    if (state === TEXT) {
      this.#held = 0;
    } else {
      if (seq > 0) work.copyWithin(0, seq, to);
      this.#held = to - seq;
    }
    this.#state = state;
    this.#returns = returns;
    this.#lineStart = lineStart;
  }

  #grow(size: number): void {
    const next = new Uint8Array(Math.max(size, this.#work.length * 2));
    next.set(this.#work.subarray(0, this.#held));
    this.#work = next;
  }
}
