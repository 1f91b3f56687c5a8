/**
 * The common step of every reader in this folder: JSON text, then the format's schema. Each reader turns
 * the outcome into its own sentence (a document names itself, a line of a log names its number).
 *
 * @module
 */
import type { z } from "zod";

/** Text that decoded, or why not: not JSON at all, or the first schema issue with its field path. */
export type Decoded<T> =
  | { readonly value: T }
  | { readonly json: false }
  | { readonly field: string; readonly message: string };

/** Parses `text` as JSON and checks it against `schema` (never throws). */
export function decodeWith<T>(schema: z.ZodType<T>, text: string): Decoded<T> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { json: false }; // The parser's position adds little: the caller names the document or line.
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { value: parsed.data };
  const issue = parsed.error.issues[0]!;
  return { field: issue.path.join(".") || "(document)", message: issue.message };
}
