/**
 * What an error message says of a person's input: "did you mean …?" (the nearest of a set of known names to
 * a mistyped one, by edit distance) and a quote of the input clipped to a readable length. Pure (no Deno
 * API, no zod), so that the CLI, the driver's key names and the policy presets all suggest the same way, and
 * so that the keeper's flag errors load nothing else. `protocol/mod.ts` re-exports it.
 *
 * @module
 */

/** Error messages and details quote at most this many characters of a driver's input. */
export const ECHO_CHARS = 80;

/** `text` cut to {@link ECHO_CHARS} characters, with a marker saying how long it was when longer. */
export function clip(text: string): string {
  return text.length <= ECHO_CHARS ? text : `${text.slice(0, ECHO_CHARS)}… (${text.length} characters)`;
}

/** Names longer than this are not compared (the distance is quadratic; a typo is short). */
const MAX_COMPARED = 64;

/**
 * The Damerau–Levenshtein (optimal string alignment) distance between `a` and `b`: insertions, deletions,
 * substitutions and swaps of two neighbours each count one.
 */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row: number[] = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      }
      row.push(best);
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}

/**
 * The known name nearest to `word`, if it is near enough to be a typo of it: at most 1 edit for names of
 * up to 4 characters, 2 up to 8, 3 beyond (`--timout` → `timeout`, `atach` → `attach`, `basc` → `basic`).
 * A case-only difference always counts. Ties go to the first in `known`.
 */
export function closest(word: string, known: Iterable<string>): string | undefined {
  if (word.length === 0 || word.length > MAX_COMPARED) return undefined;
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of known) {
    if (name.length > MAX_COMPARED || name === word) continue;
    const distance = editDistance(lower, name.toLowerCase());
    if (distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  if (best === undefined) return undefined;
  const allowed = Math.max(word.length, best.length) <= 4
    ? 1
    : Math.max(word.length, best.length) <= 8
    ? 2
    : 3;
  return bestDistance <= allowed ? best : undefined;
}

/** `; did you mean "X"?` for the nearest known name, or "" when none is near. */
export function didYouMean(word: string, known: Iterable<string>, prefix = ""): string {
  const near = closest(word, known);
  return near === undefined ? "" : `; did you mean "${prefix}${near}"?`;
}
