/**
 * Colour for people: green for what passed, red for what failed, only on a terminal and never when
 * `NO_COLOR` is set (no-color.org: present and not empty). Piped or redirected output stays plain text,
 * so that logs and programs reading it see no escapes.
 *
 * @module
 */

/** Whether output to stdout gets colour: a terminal, and no `NO_COLOR`. */
export function wantsColour(
  isTerminal: boolean = Deno.stdout.isTerminal(),
  noColor: string | null = Deno.env.get("NO_COLOR") ?? null,
): boolean {
  return isTerminal && (noColor === null || noColor === "");
}

/** Paints text green or red, or leaves it as it is. */
export interface Paint {
  /** What passed. */
  ok(text: string): string;
  /** What failed. */
  bad(text: string): string;
}

/** Paint that colours when `colour` is true (SGR 32/31, reset with 39 so bold or the like stays). */
export function paint(colour: boolean = wantsColour()): Paint {
  return colour
    ? { ok: (text) => `\x1b[32m${text}\x1b[39m`, bad: (text) => `\x1b[31m${text}\x1b[39m` }
    : { ok: (text) => text, bad: (text) => text };
}
