/**
 * Splitting a driver's byte stream into lines: in linear time (each byte is looked at once), with a
 * length cap, and with memory bounded by the cap whatever the input (a line of 100 MB without a newline
 * holds at most {@link MAX_DRIVER_LINE_BYTES} plus one read chunk).
 *
 * @module
 */
import { ProtocolError } from "../errors.ts";
import { clip, ECHO_CHARS, MAX_DRIVER_LINE_BYTES } from "../protocol/mod.ts";

const NEWLINE = 0x0a;
const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lossy = new TextDecoder();

/** What {@link DriverLineSplitter} yields: a line's text, or an error for a line that cannot be one. */
export type DriverLineResult = { readonly line: string } | { readonly error: ProtocolError };

/** Splits pushed chunks into lines of at most `maxBytes` bytes (newline excluded), decoded as UTF-8. */
export class DriverLineSplitter {
  readonly #maxBytes: number;
  #parts: Uint8Array[] = [];
  #length = 0;
  /** Over the cap: bytes are dropped up to the next newline. */
  #discarding = false;

  /** `maxBytes`: the longest line accepted (default {@link MAX_DRIVER_LINE_BYTES}). */
  constructor(maxBytes: number = MAX_DRIVER_LINE_BYTES) {
    this.#maxBytes = maxBytes;
  }

  /** Bytes held for the line in progress (never more than the cap). */
  get buffered(): number {
    return this.#length;
  }

  /**
   * Takes the next chunk and returns the lines it completes. An over-long line yields one
   * `E_PROTOCOL_LINE_TOO_LONG` error as soon as it crosses the cap; the rest of it is dropped.
   */
  push(chunk: Uint8Array): DriverLineResult[] {
    const out: DriverLineResult[] = [];
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline < 0 ? chunk.length : newline;
      if (!this.#discarding) this.#append(chunk.subarray(start, end), out);
      if (newline < 0) break;
      if (this.#discarding) this.#discarding = false;
      else out.push(this.#finish());
      start = newline + 1;
    }
    return out;
  }

  /** The input ended: the unterminated last line, if any. */
  end(): DriverLineResult[] {
    if (this.#discarding) {
      this.#discarding = false;
      return [];
    }
    return this.#length > 0 ? [this.#finish()] : [];
  }

  #append(bytes: Uint8Array, out: DriverLineResult[]): void {
    if (bytes.length === 0) return;
    if (this.#length + bytes.length <= this.#maxBytes) {
      // Copied: the caller's buffer may be reused for the next read.
      this.#parts.push(bytes.slice());
      this.#length += bytes.length;
      return;
    }
    const head = this.#parts[0] ?? bytes;
    const prefix = lossy.decode(head.subarray(0, ECHO_CHARS * 4)).slice(0, ECHO_CHARS);
    out.push({
      error: new ProtocolError(
        "E_PROTOCOL_LINE_TOO_LONG",
        `Driver line is longer than ${this.#maxBytes} bytes; it is discarded up to its newline: ${
          clip(prefix)
        }…`,
        { details: { max_bytes: this.#maxBytes } },
      ),
    });
    this.#parts = [];
    this.#length = 0;
    this.#discarding = true;
  }

  #finish(): DriverLineResult {
    const bytes = this.#parts.length === 1 ? this.#parts[0]! : concat(this.#parts, this.#length);
    this.#parts = [];
    this.#length = 0;
    try {
      return { line: strict.decode(bytes) };
    } catch {
      // The excerpt shows bad bytes as U+FFFD: enough for a person to find the line.
      const excerpt = lossy.decode(bytes.subarray(0, ECHO_CHARS * 4)).slice(0, ECHO_CHARS);
      return {
        error: new ProtocolError("E_PROTOCOL_UTF8", `Driver line is not valid UTF-8: ${clip(excerpt)}`, {
          details: { bytes: bytes.length },
        }),
      };
    }
  }
}

function concat(parts: readonly Uint8Array[], length: number): Uint8Array {
  const all = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  return all;
}
