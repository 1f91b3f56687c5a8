/**
 * Byte inputs for the fuzz targets that read bytes (HTTP heads, WebSocket frames, control messages, log
 * files): a case is still a string, one character per byte (0–255), so that it prints and replays as the
 * others do. Also byte mutations and a fake connection that hands the bytes over in chosen pieces.
 *
 * @module
 */
import type { Prng } from "./_prng.ts";

const encoder = new TextEncoder();

/** The bytes of a one-character-per-byte string. */
export function bytesOf(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i) & 0xff;
  return out;
}

/** The one-character-per-byte string of `bytes`. */
export function textOf(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 4096) {
    out += String.fromCharCode(...bytes.subarray(i, Math.min(bytes.length, i + 4096)));
  }
  return out;
}

/** `text` as UTF-8, one character per byte. */
export function utf8(text: string): string {
  return textOf(encoder.encode(text));
}

/** `length` random bytes, one character each. */
export function randomByteString(rng: Prng, length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += String.fromCharCode(rng.below(256));
  return out;
}

/** `bytes` (one character each) with 1–4 byte mutations: flips, inserts, deletes, duplicates, cuts. */
export function mutateBytes(rng: Prng, bytes: string, tokens: readonly string[] = []): string {
  let out = bytes;
  for (let n = 1 + rng.below(4); n > 0; n--) {
    const at = rng.below(out.length + 1);
    switch (rng.below(8)) {
      case 0: { // Flip bits of one byte.
        if (out.length === 0) break;
        const i = rng.below(out.length);
        out = out.slice(0, i) + String.fromCharCode(out.charCodeAt(i) ^ (1 << rng.below(8))) +
          out.slice(i + 1);
        break;
      }
      case 1: // A random byte.
        if (out.length === 0) break;
        out = out.slice(0, at) + String.fromCharCode(rng.below(256)) + out.slice(at + 1);
        break;
      case 2: // Insert random bytes.
        out = out.slice(0, at) + randomByteString(rng, 1 + rng.below(16)) + out.slice(at);
        break;
      case 3: // Delete a range.
        out = out.slice(0, at) + out.slice(Math.min(out.length, at + 1 + rng.below(32)));
        break;
      case 4: { // Duplicate a range.
        const end = Math.min(out.length, at + 1 + rng.below(64));
        out = out.slice(0, end) + out.slice(at, end).repeat(1 + rng.below(3)) + out.slice(end);
        break;
      }
      case 5: // Truncate.
        out = out.slice(0, at);
        break;
      case 6: // A dictionary token.
        if (tokens.length > 0) out = out.slice(0, at) + rng.pick(tokens) + out.slice(at);
        break;
      default: // Zeros over a range (a block lost on disk).
        out = out.slice(0, at) + "\0".repeat(Math.min(out.length - at, 1 + rng.below(64))) +
          out.slice(Math.min(out.length, at + 1 + rng.below(64)));
    }
  }
  return out;
}

/**
 * How a stream is cut into reads: `N` (pieces of N bytes) or `rS` (pieces of 1–64 bytes drawn from a
 * generator seeded with S).
 */
export function randomChunking(rng: Prng): string {
  const roll = rng.below(10);
  if (roll < 3) return `r${rng.u32()}`;
  if (roll < 4) return String(1 + rng.below(8));
  return String(1 + rng.below(rng.chance(0.5) ? 4096 : 200));
}

/** The sizes of successive reads under `chunking` (see {@link randomChunking}), as a generator. */
export function chunkSizes(chunking: string, rng: () => number): () => number {
  if (chunking.startsWith("r")) return () => 1 + Math.floor(rng() * 64);
  const size = Math.max(1, Number(chunking) || 1);
  return () => size;
}

/**
 * A connection whose reads hand over `bytes` in pieces, then the end (null); writes are kept. The
 * functions of `Deno.Conn` the code under test calls, and nothing else.
 */
export class FakeConn {
  readonly #bytes: Uint8Array;
  readonly #next: () => number;
  #at = 0;
  /** What was written to it, in order. */
  readonly written: Uint8Array[] = [];
  /** Resolves when it is closed. */
  readonly closed: Promise<void>;
  #close!: () => void;
  isClosed = false;

  constructor(bytes: Uint8Array, next: () => number) {
    this.#bytes = bytes;
    this.#next = next;
    this.closed = new Promise((resolve) => this.#close = resolve);
  }

  /** Bytes handed over so far. */
  get delivered(): number {
    return this.#at;
  }

  read(buffer: Uint8Array): Promise<number | null> {
    if (this.#at >= this.#bytes.length) return Promise.resolve(null);
    const n = Math.min(this.#next(), this.#bytes.length - this.#at, buffer.length);
    buffer.set(this.#bytes.subarray(this.#at, this.#at + n));
    this.#at += n;
    return Promise.resolve(n);
  }

  write(bytes: Uint8Array): Promise<number> {
    this.written.push(bytes.slice());
    return Promise.resolve(bytes.length);
  }

  close(): void {
    this.isClosed = true;
    this.#close();
  }

  /** This, as the connection type the code under test takes. */
  get conn(): Deno.Conn {
    return this as unknown as Deno.Conn;
  }
}
