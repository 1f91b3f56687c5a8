/**
 * Lexical path containment, the one test every grant, mount and workspace check uses.
 *
 * @module
 */

/**
 * True when the absolute, normalised `path` is `root` or lies inside it, segment by segment (`/ab` is not
 * inside `/a`; everything is inside `/`). Lexical only: it follows no link and touches no file.
 */
export function isWithin(path: string, root: string): boolean {
  return path === root || path.startsWith(root === "/" ? "/" : `${root}/`);
}
