/**
 * Mutations of fuzz inputs: structure-aware ones on JSON values (replace, drop, add, nest, retype a
 * node) and text ones (insert a dictionary token, flip, delete, duplicate, splice two corpus entries,
 * insert random bytes or code points), all driven by a {@link Prng}.
 *
 * @module
 */
import type { Prng } from "./_prng.ts";

/** Values a structure-aware mutation puts in place of a node. */
const INTERESTING: readonly unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1,
  0.5,
  -0,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 32,
  2 ** 53,
  -(2 ** 53),
  1e308,
  "",
  " ",
  "..",
  "/",
  "//",
  "/etc/passwd",
  "${home}",
  "${workspace}/../x",
  "\u0000",
  "\uFEFF",
  "\uD800",
  "a".repeat(5000),
  "é😀",
  [],
  {},
  [[[[[[]]]]]],
  { "__proto__": { polluted: true } },
  { constructor: { prototype: 1 } },
];

/** A random JSON-ish value (depth-limited). */
export function randomValue(rng: Prng, depth = 0): unknown {
  const roll = rng.below(depth > 3 ? 6 : 9);
  switch (roll) {
    case 0:
      return rng.pick(INTERESTING);
    case 1:
      return rng.below(100000) - 50000;
    case 2:
      return randomString(rng, rng.below(12));
    case 3:
      return rng.chance(0.5);
    case 4:
      return null;
    case 5:
      return rng.u32() / 7;
    case 6:
      return Array.from({ length: rng.below(4) }, () => randomValue(rng, depth + 1));
    default: {
      const out: Record<string, unknown> = {};
      for (let i = rng.below(4); i > 0; i--) {
        out[randomString(rng, 1 + rng.below(8))] = randomValue(rng, depth + 1);
      }
      return out;
    }
  }
}

/** A string of random code points, mostly ASCII. */
export function randomString(rng: Prng, length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) {
    const roll = rng.below(10);
    const code = roll < 6
      ? 0x20 + rng.below(0x5f)
      : roll < 7
      ? rng.below(0x20)
      : roll < 8
      ? 0x80 + rng.below(0x780)
      : roll < 9
      ? 0xd800 + rng.below(0x800) // Lone surrogates.
      : rng.below(0x110000);
    out += String.fromCodePoint(code);
  }
  return out;
}

/** Paths to every node of a JSON value (array indices and object keys). */
function paths(value: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []) {
  out.push(prefix);
  if (out.length > 2000) return out;
  if (Array.isArray(value)) value.forEach((v, i) => paths(v, [...prefix, i], out));
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) paths(v, [...prefix, k], out);
  }
  return out;
}

/** A copy of `value` with one structure-aware mutation applied (JSON values only). */
export function mutateValue(rng: Prng, value: unknown): unknown {
  const root = structuredClone(value);
  const all = paths(root);
  const path = rng.pick(all);
  if (path.length === 0) return rng.chance(0.5) ? randomValue(rng) : root;
  const parentPath = path.slice(0, -1);
  let parent: unknown = root;
  for (const key of parentPath) parent = (parent as Record<string | number, unknown>)[key];
  const container = parent as Record<string | number, unknown>;
  const key = path[path.length - 1]!;
  switch (rng.below(7)) {
    case 0: // Replace with something else.
      container[key] = randomValue(rng);
      break;
    case 1: // Drop.
      if (Array.isArray(container)) container.splice(key as number, 1);
      else delete container[key];
      break;
    case 2: // An unknown sibling key.
      if (!Array.isArray(container)) container[randomString(rng, 1 + rng.below(10))] = randomValue(rng);
      else container.push(randomValue(rng));
      break;
    case 3: // Nest deeper.
      container[key] = rng.chance(0.5) ? [container[key]] : { [String(key)]: container[key] };
      break;
    case 4: // Retype: number <-> string, etc.
      container[key] = typeof container[key] === "string"
        ? Number(container[key]) || rng.pick(INTERESTING)
        : JSON.stringify(container[key]) ?? "";
      break;
    case 5: // Duplicate into another place.
      container[randomString(rng, 3)] = structuredClone(container[key]);
      break;
    default: // An interesting value.
      container[key] = rng.pick(INTERESTING);
  }
  return root;
}

/** `text` with 1–4 text mutations; `tokens` are dictionary entries worth inserting. */
export function mutateText(
  rng: Prng,
  text: string,
  tokens: readonly string[],
  corpus: readonly string[],
): string {
  let out = text;
  for (let n = 1 + rng.below(4); n > 0; n--) {
    const at = rng.below(out.length + 1);
    switch (rng.below(9)) {
      case 0:
      case 1:
        out = out.slice(0, at) + rng.pick(tokens) + out.slice(at);
        break;
      case 2: { // Delete a range.
        const end = Math.min(out.length, at + 1 + rng.below(32));
        out = out.slice(0, at) + out.slice(end);
        break;
      }
      case 3: { // Duplicate a range, sometimes many times.
        const end = Math.min(out.length, at + 1 + rng.below(64));
        const times = rng.chance(0.1) ? 1 + rng.below(500) : 1 + rng.below(3);
        out = out.slice(0, end) + out.slice(at, end).repeat(times) + out.slice(end);
        break;
      }
      case 4: // Random code points.
        out = out.slice(0, at) + randomString(rng, 1 + rng.below(8)) + out.slice(at);
        break;
      case 5: { // Replace one character.
        if (out.length === 0) break;
        const i = rng.below(out.length);
        out = out.slice(0, i) + randomString(rng, 1) + out.slice(i + 1);
        break;
      }
      case 6: { // Splice with another corpus entry.
        const other = rng.pick(corpus);
        const from = rng.below(other.length + 1);
        out = out.slice(0, at) + other.slice(from, from + rng.below(200));
        break;
      }
      case 7: // Truncate.
        out = out.slice(0, at);
        break;
      default: { // A run of digits (huge numbers).
        out = out.slice(0, at) + "9".repeat(1 + rng.below(rng.chance(0.1) ? 400 : 12)) + out.slice(at);
      }
    }
  }
  return out;
}

/** Random bytes decoded as (possibly invalid, replaced) UTF-8 text. */
export function randomBytesText(rng: Prng, length: number): string {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = rng.below(256);
  return new TextDecoder().decode(bytes);
}
