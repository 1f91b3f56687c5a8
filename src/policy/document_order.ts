/**
 * Problems are reported in document order, whichever check found them, so that the list reads top to
 * bottom like the file the author is fixing.
 *
 * @module
 */
import type { PolicyProblem } from "../errors.ts";
import type { FieldPath } from "./field_path.ts";

/** A problem and the place in the document it is about (used for ordering only). */
export interface LocatedProblem {
  /** Where the problem is; empty for problems about the whole run (they come first). */
  readonly path: FieldPath;
  /** The problem as reported. */
  readonly problem: PolicyProblem;
}

/**
 * The position of `path` in `doc`: at each step the index of the key among its object's keys (in the
 * order the parser met them) or the array index. A missing key gets -1, so a required key that is absent
 * (`version`) is reported before its siblings.
 */
export function documentPosition(doc: unknown, path: FieldPath): number[] {
  const position: number[] = [];
  let value = doc;
  for (const segment of path) {
    if (typeof segment === "number") {
      position.push(segment);
    } else if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      position.push(Object.keys(value).indexOf(segment));
    } else {
      position.push(-1);
    }
    value = typeof value === "object" && value !== null
      ? (value as Record<string | number, unknown>)[segment]
      : undefined;
  }
  return position;
}

function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i]! - b[i]!;
  }
  // A field comes before the fields inside it.
  return a.length - b.length;
}

/** The problems of `found` sorted by their position in `doc`; problems at the same place keep their order. */
export function inDocumentOrder(doc: unknown, found: readonly LocatedProblem[]): PolicyProblem[] {
  return found
    .map((entry) => ({ entry, position: documentPosition(doc, entry.path) }))
    .sort((a, b) => compare(a.position, b.position))
    .map(({ entry }) => entry.problem);
}
