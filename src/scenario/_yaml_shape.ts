/**
 * The shape a scenario document may have before it is turned into values: keys are scalars, unique in
 * their map, and nesting is bounded. The checks are linear in the document; they stand in for two
 * super-linear paths of the YAML library: `uniqueKeys` compares each key with every earlier one (40,000
 * keys, 400 KiB, take 90 s), and `toJS()` prints a collection used as a key at every level of nesting (a
 * few hundred nested `? ` keys, under 1 KiB, take minutes).
 *
 * @module
 */
import { type Document, isAlias, isCollection, isPair, isScalar, type Node } from "yaml";

/**
 * Deepest nesting of collections a scenario may have. Real scenarios nest five or six levels (steps, a
 * step, its `wait_for`, a list of patterns).
 */
export const MAX_SCENARIO_DEPTH = 64;

/** What is wrong with a document's shape, and where (an offset into the text, when known). */
export interface ShapeProblem {
  /** `"shape"` (keys, nesting) or `"syntax"` (a repeated key, which YAML itself forbids). */
  readonly kind: "shape" | "syntax";
  readonly message: string;
  readonly offset: number | null;
}

/** The first shape problem of `doc`, or `null`. Walks with its own stack (no recursion). */
export function yamlShapeProblem(doc: Document): ShapeProblem | null {
  const stack: { node: unknown; depth: number }[] = [{ node: doc.contents, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (!isCollection(node)) continue; // Scalars and aliases (aliases are counted by toJS()).
    if (depth >= MAX_SCENARIO_DEPTH) {
      return {
        kind: "shape",
        message: `it nests deeper than ${MAX_SCENARIO_DEPTH} levels`,
        offset: offsetOf(node),
      };
    }
    const seen = new Set<string>();
    for (const item of node.items as unknown[]) {
      if (!isPair(item)) {
        stack.push({ node: item, depth: depth + 1 });
        continue;
      }
      const key = item.key;
      if (key !== null && key !== undefined && !isScalar(key)) {
        return {
          kind: "shape",
          message: "a key is not a plain value (a list, a map or an alias used as a key)",
          offset: isAlias(key) || isCollection(key) ? offsetOf(key) : null,
        };
      }
      const value = isScalar(key) ? key.value : null;
      const id = `${typeof value}:${String(value)}`;
      if (seen.has(id)) {
        return {
          kind: "syntax",
          message: `Map keys must be unique ("${String(value).slice(0, 80)}" appears twice)`,
          offset: isScalar(key) ? offsetOf(key) : null,
        };
      }
      seen.add(id);
      stack.push({ node: item.value, depth: depth + 1 });
    }
  }
  return null;
}

function offsetOf(node: Node): number | null {
  return node.range?.[0] ?? null;
}
