/**
 * A small reader for the SBPL that {@link seatbeltProfile} writes, so that tests and auditors can check
 * a profile's structure instead of matching text. It reads nested lists of symbols, numbers, strings and
 * `#"regex"` literals, and skips `;` comments.
 *
 * It is deliberately stricter than Apple's reader: it accepts exactly what our escaper produces, so an
 * escaping bug shows up as a syntax error instead of a differently parsed profile.
 *
 * - Outside strings only printable ASCII, spaces, tabs and newlines may appear.
 * - In a string, raw characters are printable ASCII other than `"` and `\`. The escapes are `\"`, `\\`,
 *   `\n`, `\t`, `\r` and `\xHH` (exactly two hex digits, one byte each); the bytes are then decoded as
 *   UTF-8 and must be valid. NUL is refused.
 * - A `#"…"` regex runs to the next `"`, without escapes, in printable ASCII.
 * - Quote characters (`'`, `` ` ``, `,`), brackets, braces and `|` are refused.
 *
 * @module
 */

/** A list `( … )`. */
export interface SexpList {
  /** Discriminant. */
  readonly type: "list";
  /** The elements, in order. */
  readonly items: readonly Sexp[];
  /** Offset of `(` in the text (UTF-16 code units). */
  readonly offset: number;
}

/** A symbol such as `allow` or `file-read*`. */
export interface SexpSymbol {
  /** Discriminant. */
  readonly type: "symbol";
  /** The symbol's name. */
  readonly name: string;
  /** Offset in the text. */
  readonly offset: number;
}

/** A decimal integer such as the `1` of `(version 1)`. */
export interface SexpNumber {
  /** Discriminant. */
  readonly type: "number";
  /** The value. */
  readonly value: number;
  /** Offset in the text. */
  readonly offset: number;
}

/** A string literal, with escapes decoded. */
export interface SexpString {
  /** Discriminant. */
  readonly type: "string";
  /** The decoded value. */
  readonly value: string;
  /** Offset of the opening `"` in the text. */
  readonly offset: number;
}

/** A regex literal `#"…"` (Apple's extension), kept as written. */
export interface SexpRegex {
  /** Discriminant. */
  readonly type: "regex";
  /** The regex source between the quotes. */
  readonly source: string;
  /** Offset of `#` in the text. */
  readonly offset: number;
}

/** Any datum the reader produces. */
export type Sexp = SexpList | SexpSymbol | SexpNumber | SexpString | SexpRegex;

/** The text is not SBPL as our profiles write it; `offset` is where reading stopped. */
export class SexpSyntaxError extends SyntaxError {
  /** Offset in the text (UTF-16 code units). */
  readonly offset: number;

  /** Creates the error; the message says what was expected at `offset`. */
  constructor(message: string, offset: number) {
    super(`${message} at offset ${offset}`);
    this.name = "SexpSyntaxError";
    this.offset = offset;
  }
}

const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);
// Characters that end an atom, and characters that have no place in our profiles at all.
const DELIMITERS = new Set(["(", ")", '"', ";"]);
const REFUSED = new Set(["'", "`", ",", "[", "]", "{", "}", "|"]);
const HEX = /^[0-9a-fA-F]{2}$/;
/** A string literal's body with nothing to decode: printable ASCII without `\\` (nor `"`, which ends it). */
const PLAIN_LITERAL = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/;
const NAMED_ESCAPES: Readonly<Record<string, number>> = { '"': 0x22, "\\": 0x5c, n: 0x0a, t: 0x09, r: 0x0d };
// ignoreBOM: a leading U+FEFF is part of the value (a path may start with it), not a byte order mark.
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function isPrintable(char: string): boolean {
  const code = char.charCodeAt(0);
  return code >= 0x20 && code <= 0x7e;
}

/** Reads every top-level datum of `text`. Throws {@link SexpSyntaxError} on anything malformed. */
export function readSexps(text: string): Sexp[] {
  let pos = 0;

  function skipSpaceAndComments(): void {
    while (pos < text.length) {
      const char = text[pos]!;
      if (WHITESPACE.has(char)) {
        pos++;
      } else if (char === ";") {
        while (pos < text.length && text[pos] !== "\n") {
          if (text[pos] !== "\t" && !isPrintable(text[pos]!)) {
            throw new SexpSyntaxError("Unexpected non-printable character in a comment", pos);
          }
          pos++;
        }
      } else {
        return;
      }
    }
  }

  function readString(start: number): SexpString {
    // Most literals have no escape: printable ASCII up to the closing quote is its own UTF-8 (the same
    // checks as below, one slice instead of a byte at a time).
    const close = text.indexOf('"', start + 1);
    if (close !== -1) {
      const body = text.slice(start + 1, close);
      if (PLAIN_LITERAL.test(body)) {
        pos = close + 1;
        return { type: "string", value: body, offset: start };
      }
    }
    const bytes: number[] = [];
    pos = start + 1;
    for (;;) {
      if (pos >= text.length) throw new SexpSyntaxError("Unterminated string", start);
      const char = text[pos]!;
      if (char === '"') {
        pos++;
        break;
      }
      if (char === "\\") {
        const next = text[pos + 1];
        if (next === undefined) throw new SexpSyntaxError("Unterminated escape", pos);
        if (next === "x") {
          const hex = text.slice(pos + 2, pos + 4);
          if (!HEX.test(hex)) throw new SexpSyntaxError("\\x needs exactly two hex digits", pos);
          bytes.push(parseInt(hex, 16));
          pos += 4;
        } else if (Object.hasOwn(NAMED_ESCAPES, next)) {
          bytes.push(NAMED_ESCAPES[next]!);
          pos += 2;
        } else {
          throw new SexpSyntaxError(`Unknown escape \\${next}`, pos);
        }
        continue;
      }
      if (!isPrintable(char)) throw new SexpSyntaxError("Raw non-printable character in a string", pos);
      bytes.push(char.charCodeAt(0));
      pos++;
    }
    if (bytes.includes(0)) throw new SexpSyntaxError("NUL byte in a string", start);
    let value: string;
    try {
      value = decoder.decode(new Uint8Array(bytes));
    } catch (error: unknown) {
      throw new SexpSyntaxError(`String is not valid UTF-8 (${(error as Error).message})`, start);
    }
    return { type: "string", value, offset: start };
  }

  function readRegex(start: number): SexpRegex {
    pos = start + 2;
    const from = pos;
    while (pos < text.length && text[pos] !== '"') {
      if (!isPrintable(text[pos]!)) throw new SexpSyntaxError("Non-printable character in a regex", pos);
      pos++;
    }
    if (pos >= text.length) throw new SexpSyntaxError("Unterminated regex", start);
    const source = text.slice(from, pos);
    pos++;
    return { type: "regex", source, offset: start };
  }

  function readAtom(start: number): SexpSymbol | SexpNumber {
    while (pos < text.length && !WHITESPACE.has(text[pos]!) && !DELIMITERS.has(text[pos]!)) {
      const char = text[pos]!;
      if (REFUSED.has(char) || !isPrintable(char)) {
        throw new SexpSyntaxError(`Unexpected character ${JSON.stringify(char)}`, pos);
      }
      pos++;
    }
    const atom = text.slice(start, pos);
    if (/^-?[0-9]+$/.test(atom)) return { type: "number", value: Number(atom), offset: start };
    return { type: "symbol", name: atom, offset: start };
  }

  function readDatum(): Sexp {
    const start = pos;
    const char = text[pos]!;
    if (char === "(") {
      pos++;
      const items: Sexp[] = [];
      for (;;) {
        skipSpaceAndComments();
        if (pos >= text.length) throw new SexpSyntaxError("Unclosed list", start);
        if (text[pos] === ")") {
          pos++;
          return { type: "list", items, offset: start };
        }
        items.push(readDatum());
      }
    }
    if (char === ")") throw new SexpSyntaxError("Unexpected )", pos);
    if (char === '"') return readString(start);
    if (char === "#" && text[pos + 1] === '"') return readRegex(start);
    return readAtom(start);
  }

  const data: Sexp[] = [];
  for (;;) {
    skipSpaceAndComments();
    if (pos >= text.length) return data;
    data.push(readDatum());
  }
}

/**
 * The string an expression denotes, or `null` when it is not a string: a literal, or a
 * `(string-append …)` of literals (how long values are written).
 */
export function stringValue(node: Sexp): string | null {
  if (node.type === "string") return node.value;
  if (node.type !== "list" || node.items.length < 2) return null;
  const [head, ...rest] = node.items;
  if (head?.type !== "symbol" || head.name !== "string-append") return null;
  let value = "";
  for (const part of rest) {
    if (part.type !== "string") return null;
    value += part.value;
  }
  return value;
}

/** The symbol's name when `node` is a symbol, otherwise `null`. */
export function symbolName(node: Sexp | undefined): string | null {
  return node?.type === "symbol" ? node.name : null;
}
