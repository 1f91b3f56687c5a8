/**
 * Program-chosen strings made safe to print on a person's terminal: a session's argv, a command line from
 * the command log, a window title. Printed as they are, an `ESC` in one of them would be a control
 * sequence of the person's terminal (a clipboard write, a title, a query answered into their shell), and a
 * bidi override (U+202E) would make a listing read other than it is.
 *
 * One class of characters for both uses: C0 controls, DEL, C1 controls (U+0080–U+009F, which terminals
 * that decode UTF-8 may still obey) and the bidi formatting characters (U+061C, U+200E/U+200F,
 * U+202A–U+202E, U+2066–U+2069).
 *
 * @module
 */

/** The characters neither a listing nor a title may carry as they are (see the module documentation). */
// deno-lint-ignore no-control-regex -- control characters are exactly what is matched.
export const UNPRINTABLE = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Short escapes for the controls people know by name. */
const NAMED: Readonly<Record<string, string>> = { "\t": "\\t", "\n": "\\n", "\r": "\\r", "\x1b": "\\e" };

/**
 * `text` with every unprintable character written as a visible escape: `\t`, `\n`, `\r`, `\e`, `\xHH`
 * (other C0, DEL, C1) or `\u{HHHH}` (bidi). The text stays readable and the line stays one line; the
 * exact string is in the command's `--json` output.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, escapeOne);
}

function escapeOne(ch: string): string {
  const named = NAMED[ch];
  if (named !== undefined) return named;
  const code = ch.charCodeAt(0);
  const hex = code.toString(16).padStart(2, "0");
  return code <= 0xff ? `\\x${hex}` : `\\u{${hex}}`;
}

/** `text` without its unprintable characters (a window title: no escape belongs in it, visible or not). */
export function stripUnprintable(text: string): string {
  return text.replace(UNPRINTABLE, "");
}
