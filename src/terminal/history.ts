/**
 * `OutputHistory`: a bounded record of a session's most recent output (and the resizes between it), kept
 * so that a terminal model created on the first snapshot request can replay it.
 *
 * Memory is what was output, up to the bound: a session that prints nothing holds nothing. (A chunk cut
 * to fit is a slice that keeps its whole read alive until it is dropped, so the real bound is the
 * capacity plus one read of at most 64 KiB; copying every chunk's tail instead would cost the hot path.)
 * Small chunks (keystroke echoes) are joined into blocks so that thousands of one-character strings do
 * not each cost an object.
 *
 * @module
 */

/** A terminal size. */
export interface Size {
  readonly cols: number;
  readonly rows: number;
}

/** One retained entry: output text or a resize. */
export type HistoryEntry = string | Size;

/**
 * Default bound of {@link OutputHistory}, in UTF-16 code units (≈ bytes for ASCII output): a few
 * redraws of a full 80×24 screen, or a shell's last screens, while staying small next to what a session
 * costs anyway (~33 KiB), since every session that prints keeps one.
 */
export const SCREEN_HISTORY = 16 * 1024;
/** A resize counts as this many units, so that resizes alone cannot grow the history unbounded. */
const RESIZE_UNITS = 32;
/** Chunks shorter than this are gathered and joined into one block. */
const SMALL = 1024;
/** Gathered pieces are joined once there are this many or they reach {@link SMALL} units. */
const MAX_PIECES = 64;

/** The last `capacity` units of output, with the size the terminal had where the record starts. */
export class OutputHistory {
  readonly capacity: number;
  #blocks: HistoryEntry[] = [];
  #pieces: string[] = [];
  #pieceUnits = 0;
  #units = 0;
  #start: Size;
  #dropped = false;

  /** Keeps at most `capacity` units (0 keeps nothing), starting at a terminal of size `start`. */
  constructor(capacity: number, start: Size) {
    this.capacity = Math.max(0, Math.floor(capacity));
    this.#start = start;
  }

  /** True once any output had to be dropped: a replay would miss it. */
  get dropped(): boolean {
    return this.#dropped;
  }

  /** The terminal size in effect at the first retained entry. */
  get start(): Size {
    return this.#start;
  }

  /** Units retained. */
  get units(): number {
    return this.#units;
  }

  /** Records output text. */
  push(text: string): void {
    if (text.length === 0) return;
    if (this.capacity === 0) {
      this.#dropped = true;
      return;
    }
    if (text.length >= SMALL) {
      this.#join();
      this.#blocks.push(text);
    } else {
      this.#pieces.push(text);
      this.#pieceUnits += text.length;
      if (this.#pieces.length >= MAX_PIECES || this.#pieceUnits >= SMALL) this.#join();
    }
    this.#units += text.length;
    this.#trim();
  }

  /** Records a resize (output after it was drawn for the new size). */
  resize(size: Size): void {
    if (this.capacity === 0) {
      this.#start = size; // Nothing retained: a replay of nothing starts at the current size.
      return;
    }
    this.#join();
    this.#blocks.push(size);
    this.#units += RESIZE_UNITS;
    this.#trim();
  }

  /** Everything retained, oldest first. */
  entries(): HistoryEntry[] {
    this.#join();
    return [...this.#blocks];
  }

  #join(): void {
    if (this.#pieces.length === 0) return;
    this.#blocks.push(this.#pieces.join(""));
    this.#pieces = [];
    this.#pieceUnits = 0;
  }

  #trim(): void {
    while (this.#units > this.capacity) {
      if (this.#blocks.length === 0) this.#join();
      const first = this.#blocks[0]!;
      if (typeof first !== "string") {
        this.#blocks.shift();
        this.#start = first;
        this.#units -= RESIZE_UNITS;
        continue;
      }
      this.#dropped = true;
      const excess = this.#units - this.capacity;
      if (first.length <= excess) {
        this.#blocks.shift();
        this.#units -= first.length;
        continue;
      }
      // Never start at the second half of a surrogate pair: the replay would begin with a lone half.
      let cut = excess;
      const code = first.charCodeAt(cut);
      if (code >= 0xdc00 && code <= 0xdfff) cut++;
      this.#blocks[0] = first.slice(cut);
      this.#units -= cut;
    }
  }
}
