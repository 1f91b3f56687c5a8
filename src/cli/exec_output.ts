/**
 * `exec`'s output, kept in proportion to the result it becomes: as UTF-8 bytes in blocks (never as UTF-16
 * strings, never joined, never copied as it grows), made plain as it arrives (not in one pass over all of
 * it at the end), and written out as the result's JSON string piece by piece (never as one document).
 *
 * Before, `exec -- yes` held every chunk, their join, its decoded string, an array of its lines, the plain
 * text, the JSON document and its UTF-8 bytes at once: 13 bytes of memory and more per byte of result,
 * and up to seconds to build them after the program had ended.
 *
 * @module
 */
import { fromBase64 } from "../frames/mod.ts";
import { PlainTextStream } from "../session/mod.ts";

/** The first block's size; each next one is as large as all before it, up to {@link BLOCK_MAX}. */
const BLOCK_MIN = 64 * 1024;
const BLOCK_MAX = 1024 * 1024;
/** Bytes escaped and written at a time. */
const WRITE_PIECE = 64 * 1024;

const encoder = new TextEncoder();

/**
 * What `JSON.stringify` writes for the characters it escapes (quote, backslash, control characters), as a
 * flat table: `ESCAPE_LENGTH[b]` bytes at `ESCAPE_BYTES[8 * b]` stand for byte `b` (0: written as it is).
 */
const ESCAPE_LENGTH = new Uint8Array(256);
const ESCAPE_BYTES = new Uint8Array(256 * 8);
for (let c = 0; c < 0x80; c++) {
  if (c >= 0x20 && c !== 0x22 && c !== 0x5c) continue;
  const escaped = encoder.encode(JSON.stringify(String.fromCharCode(c)).slice(1, -1));
  ESCAPE_LENGTH[c] = escaped.length;
  ESCAPE_BYTES.set(escaped, 8 * c);
}

/** Bytes in blocks: appending never copies what is kept, and the end can be taken back. */
export class ByteBlocks {
  readonly #blocks: Uint8Array[] = [];
  /** Bytes used of each block (a character that did not fit leaves up to 3 bytes at a block's end unused). */
  readonly #used: number[] = [];
  #length = 0;

  /** Bytes kept. */
  get length(): number {
    return this.#length;
  }

  /** Appends `text` as UTF-8. */
  append(text: string): void {
    let rest = text;
    while (rest.length > 0) {
      // Room for one character at least (4 bytes): every round writes something.
      const at = this.#room(4);
      const { read, written } = encoder.encodeInto(rest, this.#blocks[at]!.subarray(this.#used[at]!));
      this.#used[at]! += written;
      this.#length += written;
      if (read === rest.length) return;
      rest = rest.slice(read);
    }
  }

  /** Appends bytes. */
  appendBytes(bytes: Uint8Array): void {
    let done = 0;
    while (done < bytes.length) {
      const at = this.#room(1);
      const block = this.#blocks[at]!;
      const count = Math.min(block.length - this.#used[at]!, bytes.length - done);
      block.set(bytes.subarray(done, done + count), this.#used[at]!);
      this.#used[at]! += count;
      this.#length += count;
      done += count;
    }
  }

  /** Drops every byte after the first `length`. */
  truncate(length: number): void {
    while (this.#length > length) {
      const last = this.#blocks.length - 1;
      const drop = Math.min(this.#used[last]!, this.#length - length);
      this.#used[last]! -= drop;
      this.#length -= drop;
      if (this.#used[last] === 0) {
        this.#blocks.pop();
        this.#used.pop();
      }
    }
  }

  /** The bytes kept, in order, in pieces of at most `size` (views of the blocks, not copies). */
  *pieces(size: number): Generator<Uint8Array> {
    for (let b = 0; b < this.#blocks.length; b++) {
      const block = this.#blocks[b]!.subarray(0, this.#used[b]!);
      for (let at = 0; at < block.length; at += size) yield block.subarray(at, at + size);
    }
  }

  /** The index of a block with `need` bytes free: the last one, or a new one. */
  #room(need: number): number {
    const last = this.#blocks.length - 1;
    if (last >= 0 && this.#blocks[last]!.length - this.#used[last]! >= need) return last;
    const size = Math.min(BLOCK_MAX, Math.max(BLOCK_MIN, this.#length));
    this.#blocks.push(new Uint8Array(size));
    this.#used.push(0);
    return last + 1;
  }
}

/** What `exec` keeps of a session's output: raw (`--raw`) or plain text, as UTF-8 bytes. */
export class ExecOutput {
  readonly #bytes = new ByteBlocks();
  readonly #raw: boolean;
  readonly #plain: PlainTextStream | null;
  /** Decodes `binary` frames (bytes that are not UTF-8) for the plain text, with U+FFFD. */
  readonly #decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  /** The decoder may hold the start of a character from the last binary frame. */
  #decoding = false;
  /** Whether text was taken yet (a byte order mark that starts the output is dropped: see `#text`). */
  #started = false;

  /** Keeps the output raw (`--raw`) or as plain text (`plainText` of it). */
  constructor(raw: boolean) {
    this.#raw = raw;
    this.#plain = raw ? null : new PlainTextStream(this.#bytes);
  }

  /** Bytes kept. */
  get length(): number {
    return this.#bytes.length;
  }

  /** Takes a `stdout` frame's payload (text, or base64 of bytes that are not UTF-8). */
  stdout(data: string, binary: boolean): void {
    if (this.#raw) {
      if (binary) this.#bytes.appendBytes(fromBase64(data));
      else this.#bytes.append(data);
      return;
    }
    if (binary) {
      this.#text(this.#decoder.decode(fromBase64(data), { stream: true }));
      this.#decoding = true;
      return;
    }
    // A text frame is whole characters: a character the decoder holds the start of cannot continue in it,
    // so that start is one U+FFFD now, as decoding all bytes at once would make it.
    if (this.#decoding) this.#flush();
    this.#text(data);
  }

  /** The output ended. */
  end(): void {
    if (this.#decoding) this.#flush();
    this.#plain?.end();
  }

  /**
   * Writes the output as the content of a JSON string (no quotes): what `JSON.stringify` of the whole
   * would write between them, in pieces of some KiB (each only valid during the call).
   */
  writeJson(write: (bytes: Uint8Array) => void): void {
    // Escaped from the UTF-8 bytes into one buffer: JSON.stringify of pieces made two strings and a
    // buffer per piece, and the garbage of 16 MiB of them grew the heap by tens of MiB.
    if (!this.#raw) {
      // Plain text is valid UTF-8 already (encoded from text). \u00XX is 6 bytes.
      const out = new Uint8Array(6 * WRITE_PIECE);
      for (const piece of this.#bytes.pieces(WRITE_PIECE)) write(out.subarray(0, escape(piece, out)));
      return;
    }
    // Raw bytes are decoded as a decode of all of them at once would: U+FFFD for what is not UTF-8, a byte
    // order mark that starts them dropped (plain text dropped its own as it came). Then encoded again
    // (valid now; a byte may have become 3) and escaped, in pieces of what fits.
    const decoder = new TextDecoder();
    const valid = new Uint8Array(3 * WRITE_PIECE);
    const out = new Uint8Array(6 * valid.length);
    const escapeText = (text: string): void => {
      for (let rest = text; rest.length > 0;) {
        const { read, written } = encoder.encodeInto(rest, valid);
        write(out.subarray(0, escape(valid.subarray(0, written), out)));
        rest = rest.slice(read);
      }
    };
    for (const piece of this.#bytes.pieces(WRITE_PIECE)) escapeText(decoder.decode(piece, { stream: true }));
    escapeText(decoder.decode());
  }

  #flush(): void {
    this.#text(this.#decoder.decode());
    this.#decoding = false;
  }

  #text(text: string): void {
    if (text.length === 0) return;
    if (!this.#started) {
      this.#started = true;
      // Decoding all the output at once dropped a byte order mark at its start: so does this.
      if (text.charCodeAt(0) === 0xfeff) return this.#text(text.slice(1));
    }
    this.#plain!.push(text);
  }
}

/**
 * Escapes valid UTF-8 for a JSON string into `out` (6 bytes of room per byte), as `JSON.stringify`
 * escapes (quote, backslash, control characters; nothing else, as the text has no lone surrogates).
 * Returns the bytes written.
 */
function escape(bytes: Uint8Array, out: Uint8Array): number {
  let w = 0;
  const n = bytes.length;
  for (let r = 0; r < n; r++) {
    const b = bytes[r]!;
    const length = ESCAPE_LENGTH[b]!;
    if (length === 0) {
      out[w++] = b;
      continue;
    }
    for (let k = 8 * b, end = k + length; k < end; k++) out[w++] = ESCAPE_BYTES[k]!;
  }
  return w;
}
