/**
 * SBPL string literals. Seatbelt profiles are read by a TinyScheme-derived reader in which only `\` and
 * `"` end or change a string; everything else, newlines and parentheses included, is copied as is. So a
 * path is safe inside `"…"` once those two are escaped. We go further and emit printable ASCII only:
 *
 * - `"` → `\"` and `\` → `\\`;
 * - every other byte outside 0x20–0x7E (control characters, DEL, and each UTF-8 byte of non-ASCII text)
 *   → `\xHH`, two lowercase hex digits, which TinyScheme turns back into exactly that byte;
 * - NUL is refused: the kernel sees C strings, so a NUL would cut the path short.
 *
 * A profile is therefore one plain ASCII text an auditor can read without invisible characters,
 * right-to-left overrides or look-alike letters, and a path can never end a string early, open a
 * comment or add a rule.
 *
 * TinyScheme reads a string into a fixed buffer (256 bytes in the releases we know of) and, when a
 * string overflows it, resumes tokenizing in the middle of the string: the rest of a long path would be
 * read as code. A value longer than {@link MAX_LITERAL_BYTES} is therefore split into several literals
 * joined by `(string-append …)`, which SBPL evaluates (Apple's own profiles use it).
 *
 * @module
 */
import { SandboxError } from "../../errors.ts";

/** Largest value one literal carries, in bytes once decoded; longer values use `string-append`. */
export const MAX_LITERAL_BYTES = 200;

const encoder = new TextEncoder();

function refuseUnencodable(value: string): void {
  if (value.includes("\0")) {
    throw new SandboxError(
      "E_SANDBOX_START",
      `An SBPL string cannot contain a NUL byte: ${JSON.stringify(value)}`,
    );
  }
  if (!value.isWellFormed()) {
    throw new SandboxError(
      "E_SANDBOX_START",
      `An SBPL string must be valid Unicode: ${JSON.stringify(value)}`,
    );
  }
}

/**
 * One SBPL string literal for `value`, quotes included, in printable ASCII (see the module doc). Throws
 * `E_SANDBOX_START` for a NUL, a lone surrogate, or a value longer than {@link MAX_LITERAL_BYTES}.
 */
export function sbplQuote(value: string): string {
  refuseUnencodable(value);
  const bytes = encoder.encode(value);
  if (bytes.length > MAX_LITERAL_BYTES) {
    throw new SandboxError(
      "E_SANDBOX_START",
      `An SBPL literal holds at most ${MAX_LITERAL_BYTES} bytes, not ${bytes.length}: use sbplString`,
    );
  }
  let out = '"';
  for (const byte of bytes) {
    if (byte === 0x22) out += '\\"';
    else if (byte === 0x5c) out += "\\\\";
    else if (byte >= 0x20 && byte <= 0x7e) out += String.fromCharCode(byte);
    else out += `\\x${byte.toString(16).padStart(2, "0")}`;
  }
  return `${out}"`;
}

/** UTF-8 length of one code point. */
function utf8Length(codePoint: number): number {
  return codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
}

/**
 * The SBPL expression for `value`: one literal ({@link sbplQuote}) when it fits, otherwise
 * `(string-append "…" "…")` of literals of at most {@link MAX_LITERAL_BYTES} bytes each, split between
 * characters. Throws like {@link sbplQuote} for a NUL or a lone surrogate.
 */
export function sbplString(value: string): string {
  refuseUnencodable(value);
  if (encoder.encode(value).length <= MAX_LITERAL_BYTES) return sbplQuote(value);
  const chunks: string[] = [];
  let chunk = "";
  let chunkBytes = 0;
  for (const char of value) {
    const length = utf8Length(char.codePointAt(0)!);
    if (chunkBytes + length > MAX_LITERAL_BYTES) {
      chunks.push(chunk);
      chunk = "";
      chunkBytes = 0;
    }
    chunk += char;
    chunkBytes += length;
  }
  chunks.push(chunk);
  return `(string-append ${chunks.map(sbplQuote).join(" ")})`;
}
