/**
 * Variables in policy paths: `${workspace}` (the run's working directory) and `${home}` (the caller's
 * HOME). They are substituted before a path is validated, so an expanded path obeys every path rule.
 *
 * @module
 */

/** The variable names a policy path may use. */
export const VARIABLE_NAMES = ["workspace", "home"] as const;

/** A variable name. */
export type VariableName = (typeof VARIABLE_NAMES)[number];

/** The value of each variable for one run. */
export type VariableValues = Readonly<Record<VariableName, string>>;

/** The result of expanding one path. */
export interface Expansion {
  /** The path with every known variable replaced (unknown ones are left as written). */
  readonly value: string;
  /** Known variables the path uses, in order of first use, without repeats. Empty: none. */
  readonly used: readonly VariableName[];
  /** Unknown `${name}` references, as written (e.g. `${project}`). Empty: none. */
  readonly unknown: readonly string[];
}

// Only `${identifier}` is a reference; a lone `$` or an unclosed `${` is an ordinary path character.
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

function isVariableName(name: string): name is VariableName {
  return (VARIABLE_NAMES as readonly string[]).includes(name);
}

/** Replaces `${workspace}` and `${home}` in `path` with `values`, reporting unknown references. */
export function expandVariables(path: string, values: VariableValues): Expansion {
  const used: VariableName[] = [];
  const unknown: string[] = [];
  const value = path.replace(REFERENCE, (reference: string, name: string) => {
    if (!isVariableName(name)) {
      if (!unknown.includes(reference)) unknown.push(reference);
      return reference;
    }
    if (!used.includes(name)) used.push(name);
    return values[name];
  });
  return { value, used, unknown };
}
