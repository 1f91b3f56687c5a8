/**
 * Field paths: where in a policy document a problem is, as keys and array indices, and its printed form
 * (`fs.write[0]`), which is what `PolicyProblem.field` carries.
 *
 * @module
 */

/** Keys and array indices from the document root, e.g. `["fs", "write", 0]`. Empty: the whole document. */
export type FieldPath = readonly (string | number)[];

/** The `field` of a problem about the whole document. */
export const WHOLE_DOCUMENT = "(policy)";

// Keys that read unambiguously after a dot; anything else (spaces, dots, quotes) is printed as ["key"].
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** `["fs", "write", 0]` → `fs.write[0]`; the empty path → `(policy)`. */
export function formatField(path: FieldPath): string {
  if (path.length === 0) return WHOLE_DOCUMENT;
  let text = "";
  for (const segment of path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else if (PLAIN_KEY.test(segment)) text += text === "" ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}

/** The value at `path` in `doc`, or `undefined` when some step is missing or not a container. */
export function valueAt(doc: unknown, path: FieldPath): unknown {
  let value = doc;
  for (const segment of path) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<string | number, unknown>)[segment];
  }
  return value;
}
