/**
 * What every fuzz target shares: the target interface, the crash of a failed property, the check that a
 * parser failed with one of its documented errors, the fixtures, and the JSON-ish case generator.
 *
 * @module
 */
import { cpuUsage } from "node:process";
import { SpecterError } from "../../src/errors.ts";
import { mutateText, mutateValue, randomBytesText } from "./_mutate.ts";
import type { Prng } from "./_prng.ts";

/** One fuzz target. */
export interface FuzzTarget {
  readonly name: string;
  /** What the target feeds, in words (for `--help`). */
  readonly about: string;
  /** The input of one case (a string, so a failure can be printed and replayed). */
  generate(rng: Prng): string;
  /** Runs one case; throws {@link Crash} (or anything unexpected) on a failure. */
  run(input: string): void | Promise<void>;
}

/** A property the oracle checks did not hold. */
export class Crash extends Error {
  override name = "Crash";
}

/** Runs `fn`; a `SpecterError` with one of `codes` is the documented failure, anything else a crash. */
export function expectTyped<T>(fn: () => T, codes: readonly string[]): T | undefined {
  try {
    return fn();
  } catch (error: unknown) {
    if (error instanceof SpecterError && codes.includes(error.code)) return undefined;
    throw error;
  }
}

export const ROOT = new URL("../../", import.meta.url).pathname;

export function readFixtures(dir: string, ext: string): string[] {
  const out: string[] = [];
  try {
    for (const entry of Deno.readDirSync(`${ROOT}${dir}`)) {
      if (entry.isFile && entry.name.endsWith(ext)) {
        out.push(Deno.readTextFileSync(`${ROOT}${dir}/${entry.name}`));
      }
    }
  } catch {
    // No fixtures directory (a packaged copy): the built-in corpus is enough.
  }
  return out.sort();
}

/** Half structure-aware mutations of a JSON corpus entry, the rest text mutations and random bytes. */
export function generateJsonish(
  rng: Prng,
  values: readonly unknown[],
  texts: readonly string[],
  tokens: readonly string[],
  render: (value: unknown) => string = (v) => JSON.stringify(v),
): string {
  const roll = rng.below(10);
  if (roll < 5) {
    let value = rng.pick(values);
    for (let n = 1 + rng.below(3); n > 0; n--) value = mutateValue(rng, value);
    try {
      return render(value);
    } catch {
      return JSON.stringify(value) ?? ""; // The renderer cannot express it (e.g. TOML without a table).
    }
  }
  if (roll < 9) return mutateText(rng, rng.pick(texts), tokens, texts);
  return randomBytesText(rng, rng.below(300));
}

/**
 * CPU time of this process so far (ms), user and system: work bounds are checked on it, not on the wall
 * clock, so that a case is not failed for the time another process had the core.
 */
export function cpuMs(): number {
  const { user, system } = cpuUsage();
  return (user + system) / 1000;
}
