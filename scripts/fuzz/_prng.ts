/**
 * A small seeded PRNG (xoshiro128**, seeded through splitmix32) and the random helpers the fuzzer uses.
 * Every case derives its own generator from (seed, target, index), so one case can be replayed alone.
 *
 * @module
 */

/** A deterministic random source. */
export class Prng {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  /** A generator for `seed` (any 32-bit values; they are mixed through splitmix32). */
  constructor(...seed: number[]) {
    let x = 0x9e3779b9;
    for (const part of seed) x = splitmix(x ^ (part >>> 0));
    this.#a = x = splitmix(x);
    this.#b = x = splitmix(x + 1);
    this.#c = x = splitmix(x + 2);
    this.#d = splitmix(x + 3) || 1; // Never all zero: xoshiro's one forbidden state.
  }

  /** A uniform 32-bit unsigned integer. */
  u32(): number {
    const result = Math.imul(rotl(Math.imul(this.#b, 5) >>> 0, 7), 9) >>> 0;
    const t = (this.#b << 9) >>> 0;
    this.#c = (this.#c ^ this.#a) >>> 0;
    this.#d = (this.#d ^ this.#b) >>> 0;
    this.#b = (this.#b ^ this.#c) >>> 0;
    this.#a = (this.#a ^ this.#d) >>> 0;
    this.#c = (this.#c ^ t) >>> 0;
    this.#d = rotl(this.#d, 11);
    return result;
  }

  /** An integer in [0, n) (n ≥ 1). */
  below(n: number): number {
    return n <= 1 ? 0 : Math.floor((this.u32() / 0x100000000) * n);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.u32() / 0x100000000 < p;
  }

  /** One element of `items` (not empty). */
  pick<T>(items: readonly T[]): T {
    return items[this.below(items.length)]!;
  }

  /** A random 64-bit value as a bigint. */
  u64(): bigint {
    return (BigInt(this.u32()) << 32n) | BigInt(this.u32());
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

function splitmix(x: number): number {
  x = (x + 0x9e3779b9) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b) >>> 0;
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) >>> 0;
  return (x ^ (x >>> 16)) >>> 0;
}

/** A 32-bit hash of a string (FNV-1a), to fold target names into seeds. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}
