/**
 * The user's home directory as policies see it (`\${home}`).
 *
 * @module
 */

/** `$HOME`, or `/` when it is not set (a policy's `\${home}` then names nothing of the user's). */
export function hostHome(): string {
  return Deno.env.get("HOME") ?? "/";
}
