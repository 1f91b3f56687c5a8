/**
 * `specter attach --detach-key`: the key (or tmux-like prefix and key) that detaches, and the scanner that
 * finds it in what a person types. Everything else typed goes to the session as it came.
 *
 * @module
 */
import { UsageError } from "../errors.ts";

/** The forms `--detach-key` accepts, as its help and its error say. */
export const DETACH_KEY_FORMS = "ctrl-X (X a letter or one of @ [ \\ ] ^ _; also C-X or ^X), " +
  'or a prefix and a key as tmux has them ("ctrl-b d")';

/** The default detach key: Ctrl-] (as telnet), a byte programs rarely need. */
export const DEFAULT_DETACH_KEY = "ctrl-]";

/** A parsed detach key. */
export interface DetachKey {
  /** The control byte (alone, it detaches; with {@link key}, it is the prefix). */
  readonly prefix: number;
  /** The key after the prefix that detaches, or null when the control byte alone does. */
  readonly key: number | null;
  /** How it is shown to people ("ctrl-]", "ctrl-b d"). */
  readonly label: string;
}

/** The byte of a control key named `ctrl-X`, `C-X` or `^X`, or null when `text` names none. */
function controlByte(text: string): number | null {
  const match = /^(?:ctrl-|c-|\^)(.)$/i.exec(text);
  if (match === null) return null;
  const ch = match[1]!.toUpperCase();
  const code = ch.charCodeAt(0);
  // @ A … Z [ \ ] ^ _ are 0x40–0x5f: their control bytes are 0x00–0x1f.
  return code >= 0x40 && code <= 0x5f ? code - 0x40 : null;
}

/** Parses `--detach-key`; anything else is an `E_USAGE` naming the accepted forms. */
export function parseDetachKey(spec: string): DetachKey {
  const parts = spec.trim().split(/\s+/);
  const prefix = parts[0] === undefined ? null : controlByte(parts[0]);
  const bad = () =>
    new UsageError(
      `Flag "--detach-key" must be ${DETACH_KEY_FORMS}, got "${spec.slice(0, 40)}"`,
      { details: { flag: "detach-key" } },
    );
  if (prefix === null || parts.length > 2) throw bad();
  const name = `ctrl-${String.fromCharCode(prefix + 0x40).toLowerCase()}`;
  if (parts.length === 1) return { prefix, key: null, label: name };
  const second = parts[1]!;
  const key = second.length === 1 && second >= "!" && second <= "~"
    ? second.charCodeAt(0)
    : controlByte(second);
  if (key === null) throw bad();
  return {
    prefix,
    key,
    label: `${name} ${key < 0x20 ? `ctrl-${String.fromCharCode(key + 0x40).toLowerCase()}` : second}`,
  };
}

/** What a chunk of typed input holds: bytes for the session, and whether the detach key came. */
export interface Scanned {
  readonly send: Uint8Array;
  readonly detach: boolean;
}

/**
 * Finds the detach key in typed input. With a prefix form, the prefix typed twice sends it once, and the
 * prefix followed by another key sends both (a prefix split across reads is kept for the next).
 */
export class DetachScanner {
  readonly #key: DetachKey;
  #prefixed = false;

  constructor(key: DetachKey) {
    this.#key = key;
  }

  /** Scans one read of typed input; what follows a detach is dropped. */
  scan(chunk: Uint8Array): Scanned {
    const { prefix, key } = this.#key;
    if (key === null) {
      const cut = chunk.indexOf(prefix);
      return cut < 0 ? { send: chunk, detach: false } : { send: chunk.subarray(0, cut), detach: true };
    }
    const out: number[] = [];
    for (const byte of chunk) {
      if (!this.#prefixed) {
        if (byte === prefix) this.#prefixed = true;
        else out.push(byte);
        continue;
      }
      this.#prefixed = false;
      if (byte === key) return { send: Uint8Array.from(out), detach: true };
      if (byte === prefix) out.push(prefix);
      else out.push(prefix, byte);
    }
    return { send: Uint8Array.from(out), detach: false };
  }
}
