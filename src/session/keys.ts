/**
 * Encoding named keys into the bytes a terminal sends (xterm conventions).
 *
 * Names: `enter`, `tab`, `shift-tab`, `esc`, `backspace`, `delete`, `insert`, `space`, `up`, `down`,
 * `left`, `right`, `home`, `end`, `pgup`, `pgdn`, `f1`–`f12`, a single character, and modifier prefixes
 * `ctrl-`, `alt-`, `shift-` (e.g. `ctrl-c`, `ctrl-\`, `alt-x`, `ctrl-up`, `shift-alt-f5`).
 *
 * @module
 */
import { ProtocolError } from "../errors.ts";
import { clip, closest } from "../protocol/mod.ts";

/** Terminal modes that change what keys send. */
export interface KeyModes {
  /** DECCKM (application cursor keys): unmodified arrows and Home/End send `ESC O x` instead of `ESC [ x`. */
  readonly applicationCursor: boolean;
}

const ESC = "\x1b";

/** Keys with an `ESC [ 1 ; m X` modified form (and `ESC [ X` / `ESC O X` unmodified). */
const CURSOR_KEYS = { up: "A", down: "B", right: "C", left: "D", home: "H", end: "F" } as const;

/** Keys with a `ESC [ n ~` form (`ESC [ n ; m ~` when modified). */
const TILDE_KEYS = {
  insert: 2,
  delete: 3,
  pgup: 5,
  pgdn: 6,
  f5: 15,
  f6: 17,
  f7: 18,
  f8: 19,
  f9: 20,
  f10: 21,
  f11: 23,
  f12: 24,
} as const;

/** F1–F4 send `ESC O P..S` (SS3), `ESC [ 1 ; m P..S` when modified. */
const SS3_KEYS = { f1: "P", f2: "Q", f3: "R", f4: "S" } as const;

/** Keys that are plain bytes. */
const PLAIN_KEYS = { enter: "\r", tab: "\t", esc: ESC, backspace: "\x7f", space: " " } as const;

const ALIASES: Readonly<Record<string, string>> = {
  return: "enter",
  escape: "esc",
  del: "delete",
  ins: "insert",
  pageup: "pgup",
  pagedown: "pgdn",
  bs: "backspace",
};

/** Every base key name (without modifiers or single characters), for help texts and tests. */
export const KEY_NAMES: readonly string[] = [
  ...Object.keys(PLAIN_KEYS),
  ...Object.keys(CURSOR_KEYS),
  ...Object.keys(TILDE_KEYS),
  ...Object.keys(SS3_KEYS),
  "shift-tab",
];

const MODIFIER_BITS = { shift: 1, alt: 2, ctrl: 4 } as const;

/** What a mistyped key may have meant: the named keys, their aliases, and single letters and digits. */
const SUGGESTED = [
  ...KEY_NAMES,
  ...Object.keys(ALIASES),
  ..."abcdefghijklmnopqrstuvwxyz0123456789",
];

/**
 * `E_PROTOCOL` for an unknown key, naming the nearest known one with the same modifiers (`ctrl-cc` →
 * `ctrl-c`) when one is near.
 */
function unknownKey(name: string, prefix = "", rest = name): ProtocolError {
  const near = closest(rest.toLowerCase(), SUGGESTED);
  // "ctrl-entr" is near "ctrl-enter", which is no key either: only a name that encodes is suggested.
  const hint = near !== undefined && encodes(prefix + near) ? `; did you mean "${prefix}${near}"?` : "";
  return new ProtocolError("E_PROTOCOL", `Unknown key "${clip(name)}"${hint}`, {
    details: { key: clip(name) },
  });
}

function encodes(name: string): boolean {
  try {
    encodeKey(name);
    return true;
  } catch {
    return false; // Not a key: not suggested.
  }
}

function ctrlByte(char: string, name: string): string {
  const upper = char.toUpperCase();
  const code = upper.charCodeAt(0);
  if (code >= 0x40 && code <= 0x5f) return String.fromCharCode(code - 0x40); // @ A–Z [ \ ] ^ _
  if (char === " ") return "\x00";
  if (char === "?") return "\x7f";
  throw unknownKey(name, "", "");
}

/**
 * Encodes one key name (throws `E_PROTOCOL` for an unknown name). Modifiers on cursor, tilde and
 * function keys use the xterm parameter `1 + shift + 2·alt + 4·ctrl`.
 */
export function encodeKey(name: string, modes: KeyModes = { applicationCursor: false }): string {
  let rest = name;
  let mods = 0;
  for (;;) {
    const dash = rest.indexOf("-");
    // "alt--" presses Alt with "-"; a lone "-" is the character itself.
    if (dash <= 0 || dash === rest.length - 1) break;
    const prefix = rest.slice(0, dash).toLowerCase();
    if (!(prefix in MODIFIER_BITS)) break;
    mods |= MODIFIER_BITS[prefix as keyof typeof MODIFIER_BITS];
    rest = rest.slice(dash + 1);
  }
  const lower = rest.length > 1 ? rest.toLowerCase() : rest;
  const key = ALIASES[lower] ?? lower;
  const param = 1 + mods;

  if (Object.hasOwn(CURSOR_KEYS, key)) {
    const final = CURSOR_KEYS[key as keyof typeof CURSOR_KEYS];
    if (mods !== 0) return `${ESC}[1;${param}${final}`;
    return modes.applicationCursor ? `${ESC}O${final}` : `${ESC}[${final}`;
  }
  if (Object.hasOwn(TILDE_KEYS, key)) {
    const code = TILDE_KEYS[key as keyof typeof TILDE_KEYS];
    return mods !== 0 ? `${ESC}[${code};${param}~` : `${ESC}[${code}~`;
  }
  if (Object.hasOwn(SS3_KEYS, key)) {
    const final = SS3_KEYS[key as keyof typeof SS3_KEYS];
    return mods !== 0 ? `${ESC}[1;${param}${final}` : `${ESC}O${final}`;
  }
  if (key === "tab" && mods === MODIFIER_BITS.shift) return `${ESC}[Z`;
  if (Object.hasOwn(PLAIN_KEYS, key)) {
    if ((mods & ~MODIFIER_BITS.alt) !== 0) {
      if (key === "space" && mods === MODIFIER_BITS.ctrl) return "\x00";
      throw unknownKey(name);
    }
    const bytes = PLAIN_KEYS[key as keyof typeof PLAIN_KEYS];
    return mods === MODIFIER_BITS.alt ? ESC + bytes : bytes;
  }
  if ([...rest].length === 1) {
    let char = rest;
    if (mods & MODIFIER_BITS.shift) char = char.toUpperCase();
    if (mods & MODIFIER_BITS.ctrl) char = ctrlByte(rest, name);
    return mods & MODIFIER_BITS.alt ? ESC + char : char;
  }
  throw unknownKey(name, name.slice(0, name.length - rest.length), rest);
}
