/**
 * High/low watermarks on output written to the terminal model but not yet parsed.
 *
 * xterm parses asynchronously (in ≤ 12 ms slices scheduled with `setTimeout`), and awaiting each write
 * costs ~2 ms per chunk in Deno, so writes are never awaited. Instead the backlog is counted, and the
 * session stops reading the terminal while it is above the high watermark (the program then blocks in
 * `write`, as with a slow real terminal) and reads again once it fell to the low watermark. This also
 * keeps xterm below the 50 MB it accepts queued before it throws.
 *
 * @module
 */

/** Default high watermark: above this many unparsed units, reading pauses (~60 ms of xterm parsing). */
export const HIGH_WATERMARK = 4 * 1024 * 1024;
/** Default low watermark: reading resumes once the backlog is down to this. */
export const LOW_WATERMARK = 1024 * 1024;

/** Counts a backlog and reports crossing the watermarks (once per crossing). */
export class Watermarks {
  readonly high: number;
  readonly low: number;
  #pending = 0;
  #paused = false;
  #onChange: (paused: boolean) => void;

  /** `onChange(true)` when the backlog rises above `high`, `onChange(false)` when it falls to `low`. */
  constructor(
    onChange: (paused: boolean) => void,
    high: number = HIGH_WATERMARK,
    low: number = LOW_WATERMARK,
  ) {
    if (!(low >= 0 && high > low)) {
      throw new RangeError(`Watermarks need 0 <= low < high, got ${low}/${high}`);
    }
    this.high = high;
    this.low = low;
    this.#onChange = onChange;
  }

  /** Units written but not yet parsed. */
  get pending(): number {
    return this.#pending;
  }

  /** True while above the high watermark and not yet back down to the low one. */
  get paused(): boolean {
    return this.#paused;
  }

  /** `n` more units were written. */
  add(n: number): void {
    this.#pending += n;
    if (!this.#paused && this.#pending > this.high) {
      this.#paused = true;
      this.#onChange(true);
    }
  }

  /** `n` units were parsed. */
  done(n: number): void {
    this.#pending = Math.max(0, this.#pending - n);
    if (this.#paused && this.#pending <= this.low) {
      this.#paused = false;
      this.#onChange(false);
    }
  }
}
