/**
 * The frame log's lines: splitting bytes into whole lines, and parsing a record or a segment header (the
 * shared vocabulary of the log's writer, its recovery and its readers).
 *
 * @module
 */
import { type Frame, type LogHeader, LogHeaderSchema } from "../protocol/mod.ts";

/** The byte every line ends with. */
export const NEWLINE = 0x0a;
/** One encoder for the log's rooms. */
export const encoder = new TextEncoder();
/** One decoder for the log's rooms. */
export const decoder = new TextDecoder();

/**
 * Splits `bytes` into complete lines (each without its newline, with the byte offsets where it starts and
 * where the next one does) and the offset after the last one.
 */
export function lines(
  bytes: Uint8Array,
  base: number,
): { lines: { start: number; next: number; text: string }[]; end: number } {
  const out: { start: number; next: number; text: string }[] = [];
  let start = 0;
  for (;;) {
    const nl = bytes.indexOf(NEWLINE, start);
    if (nl < 0) break;
    out.push({ start: base + start, next: base + nl + 1, text: decoder.decode(bytes.subarray(start, nl)) });
    start = nl + 1;
  }
  return { lines: out, end: base + start };
}

/** A record line's seq and raw offset, or null when the line is not a record. */
export function parseRecord(text: string): { frame: Frame; seq: number; raw: number | null } | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null; // Torn or damaged: the caller decides (cut on recovery, skip and report on reading).
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const record = value as Record<string, unknown>;
  const seq = record.seq;
  if (typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < 0 || typeof record.type !== "string") {
    return null;
  }
  const raw = typeof record.raw === "number" && Number.isSafeInteger(record.raw) ? record.raw : null;
  delete record.raw;
  return { frame: record as unknown as Frame, seq, raw };
}

/** A segment's header line parsed, or null when it is torn or no header. */
export function parseHeader(text: string): LogHeader | null {
  try {
    const parsed = LogHeaderSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null; // Not JSON: a torn or foreign header.
  }
}
