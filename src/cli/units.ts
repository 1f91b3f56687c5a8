/**
 * Parsing of duration and size arguments.
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import { MAX_COLS, MAX_DURATION_MS, MAX_ROWS } from "../protocol/mod.ts";

const DURATION_UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
const SIZE_UNITS: Readonly<Record<string, number>> = { "": 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/**
 * Parses a duration such as `200ms`, `5s`, `1.5m`, `2h` (or `0`) into milliseconds. A bare non-zero
 * number is rejected: `--timeout 30` is too easy to misread.
 */
export function parseDuration(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match || (match[2] === undefined && Number(match[1]) !== 0)) {
    throw new UsageError(`Flag "--${flag}" needs a duration like "200ms", "5s" or "2m", got "${text}"`, {
      details: { flag, value: text },
    });
  }
  const unit = (match[2] ?? "ms") as keyof typeof DURATION_UNITS;
  const ms = Math.round(Number(match[1]) * DURATION_UNITS[unit]);
  // Timers take a signed 32-bit delay: a longer one would fire at once (a 1000h timeout at 0 ms).
  if (ms > MAX_DURATION_MS) {
    throw new UsageError(
      `Flag "--${flag}" is longer than the largest duration (${MAX_DURATION_MS} ms), got "${text}"`,
      {
        details: { flag, value: text },
      },
    );
  }
  return ms;
}

/** The longest duration a flag takes: the formats' bound, 2^31 - 1 ms (about 24.8 days), the most a timer waits. */
export { MAX_DURATION_MS };

/** The largest size a flag takes: 2^53 - 1 bytes (larger ones lose precision as numbers). */
export const MAX_SIZE_BYTES = Number.MAX_SAFE_INTEGER;

/** Parses a size such as `8M`, `512K`, `1G`, `100` (bytes), `4MiB` into bytes (binary multiples). */
export function parseSize(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([kmg]?)(?:i?b)?$/i.exec(text.trim());
  if (!match) {
    throw new UsageError(`Flag "--${flag}" needs a size like "8M", "512K" or "1000", got "${text}"`, {
      details: { flag, value: text },
    });
  }
  const bytes = Math.floor(Number(match[1]) * SIZE_UNITS[match[2]!.toLowerCase()]!);
  if (!Number.isSafeInteger(bytes)) {
    throw new UsageError(
      `Flag "--${flag}" is larger than the largest size (${MAX_SIZE_BYTES} bytes), got "${text}"`,
      {
        details: { flag, value: text },
      },
    );
  }
  return bytes;
}

/** The largest value of a count flag without its own entry in {@link COUNT_LIMITS}. */
export const MAX_COUNT = 10000;

/**
 * The largest value of each count flag that has its own: the one table parsing, its messages and the help
 * quote (the terminal's size is the driver protocol's bound, so that a resize and `--cols` agree).
 */
export const COUNT_LIMITS: Readonly<Record<string, number>> = { cols: MAX_COLS, rows: MAX_ROWS };

/** The largest value `--FLAG` takes. */
export function countLimit(flag: string): number {
  return COUNT_LIMITS[flag] ?? MAX_COUNT;
}

/** Parses a positive integer flag (e.g. `--cols`), from 1 to {@link countLimit}. */
export function parseCount(text: string, flag: string, max = countLimit(flag)): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value < 1 || value > max) {
    throw new UsageError(`Flag "--${flag}" needs a whole number from 1 to ${max}, got "${text}"`, {
      details: { flag, value: text },
    });
  }
  return value;
}

const ESCAPES: Readonly<Record<string, string>> = {
  r: "\r",
  n: "\n",
  t: "\t",
  e: "\x1b",
  "\\": "\\",
  "0": "\0",
};

/**
 * Interprets printf-style escapes in a flag value: `\r \n \t \e \0 \\` and `\xHH`. Needed because a raw
 * carriage return is hard to type in a shell and does not survive Deno's argument handling at the end of
 * an argument. Throws `E_USAGE` for an unknown escape.
 */
export function parseEscapes(text: string, flag: string): string {
  return text.replace(/\\(x[0-9a-fA-F]{2}|.|$)/g, (_, code: string) => {
    if (code.startsWith("x") && code.length === 3) {
      return String.fromCharCode(Number.parseInt(code.slice(1), 16));
    }
    const value = ESCAPES[code];
    if (value === undefined) {
      throw new UsageError(
        `Flag "--${flag}" has an unknown escape "\\${code}" (use \\r \\n \\t \\e \\0 \\\\ \\xHH)`,
      );
    }
    return value;
  });
}
