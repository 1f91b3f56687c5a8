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

/**
 * What {@link DriverLineSplitter} yields: a line's text, or an error for a line that cannot be one (with
 * `errorAtLineEnd`, an over-long line's error comes at its end with the line's first and last bytes, where
 * a JSON-RPC request has its `id`).
 */
export type DriverLineResult =
  | { readonly line: string }
  | { readonly error: ProtocolError; readonly head?: string; readonly tail?: string };

/** Bytes of an over-long line's start and end kept for its error (with `errorAtLineEnd`). */
const EDGE_BYTES = 256;

/** Options of a {@link DriverLineSplitter}. */
export interface DriverLineOptions {
  /**
   * Report an over-long line when it ends (its newline, or the input's end) rather than when it crosses the
   * cap, with its first and last {@link EDGE_BYTES} bytes: a JSON-RPC server can then answer the request's
   * own `id`, wherever the client put it.
   */
  readonly errorAtLineEnd?: boolean;
}

/** Splits pushed chunks into lines of at most `maxBytes` bytes (newline excluded), decoded as UTF-8. */
export class DriverLineSplitter {
  readonly #maxBytes: number;
  #parts: Uint8Array[] = [];
  #length = 0;
  /** Over the cap: bytes are dropped up to the next newline. */
  #discarding = false;
  readonly #atEnd: boolean;
  /** With `errorAtLineEnd`: the over-long line's error, its first bytes, and its last bytes so far. */
  #owed: { error: ProtocolError; head: string; tail: Uint8Array } | null = null;

  /** `maxBytes`: the longest line accepted (default {@link MAX_DRIVER_LINE_BYTES}). */
  constructor(maxBytes: number = MAX_DRIVER_LINE_BYTES, options: DriverLineOptions = {}) {
    this.#maxBytes = maxBytes;
    this.#atEnd = options.errorAtLineEnd === true;
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
      else if (this.#owed !== null) this.#owed.tail = lastBytes(this.#owed.tail, chunk.subarray(start, end));
      if (newline < 0) break;
      if (this.#discarding) {
        this.#discarding = false;
        this.#payOwed(out);
      } else out.push(this.#finish());
      start = newline + 1;
    }
    return out;
  }

  /** The input ended: the unterminated last line, if any. */
  end(): DriverLineResult[] {
    if (this.#discarding) {
      this.#discarding = false;
      const out: DriverLineResult[] = [];
      this.#payOwed(out);
      return out;
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
    const error = new ProtocolError(
      "E_PROTOCOL_LINE_TOO_LONG",
      `Driver line is longer than ${this.#maxBytes} bytes; it is discarded up to its newline: ${
        clip(prefix)
      }…`,
      { details: { max_bytes: this.#maxBytes } },
    );
    if (this.#atEnd) {
      const first = this.#parts.length === 0 ? bytes : concat(this.#parts, this.#length);
      this.#owed = {
        error,
        head: lossy.decode(first.subarray(0, EDGE_BYTES)),
        tail: lastBytes(lastBytes(new Uint8Array(0), first), bytes),
      };
    } else out.push({ error });
    this.#parts = [];
    this.#length = 0;
    this.#discarding = true;
  }

  #payOwed(out: DriverLineResult[]): void {
    const owed = this.#owed;
    if (owed === null) return;
    this.#owed = null;
    out.push({ error: owed.error, head: owed.head, tail: lossy.decode(owed.tail) });
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

/** The last {@link EDGE_BYTES} bytes of `held` followed by `more`. */
function lastBytes(held: Uint8Array, more: Uint8Array): Uint8Array {
  if (more.length >= EDGE_BYTES) return more.slice(more.length - EDGE_BYTES);
  const keep = Math.min(held.length, EDGE_BYTES - more.length);
  const out = new Uint8Array(keep + more.length);
  out.set(held.subarray(held.length - keep), 0);
  out.set(more, keep);
  return out;
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
