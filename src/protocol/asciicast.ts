/**
 * asciicast v2, the recording format (`--record FILE.cast`, a bundle's `session.cast`): a header line,
 * then one `[seconds, code, data]` line per event. One writer per line kind ({@link encodeCastHeader},
 * {@link encodeCastEvent}) and one reader ({@link decodeCastHeader}, {@link decodeCastEvent}), all
 * through the schemas here.
 *
 * @module
 */
import { z } from "zod";
import { decodeWith } from "./_decode.ts";
import type { DecodeProblem } from "./results.ts";

/**
 * The header line. Specter writes `width`, `height`, `timestamp` and `env` (and `title` when set); a
 * reader also takes a header without them and keys it does not know (a recording made by another tool,
 * a hand-written golden): only `version` tells a recording from something else.
 */
export const CastHeaderSchema = z.looseObject({
  version: z.literal(2),
  width: z.int().positive().optional().describe("Terminal columns at start"),
  height: z.int().positive().optional().describe("Terminal rows at start"),
  timestamp: z.number().optional().describe("Unix time (seconds) of the start"),
  env: z.record(z.string(), z.string()).optional().describe(
    "Environment facts players use (TERM, SHELL); never other variables",
  ),
  title: z.string().optional().describe("Title shown by players"),
});

/** The header line of a recording. */
export type CastHeader = z.infer<typeof CastHeaderSchema>;

/** The event codes of asciicast v2: `o` output, `i` input, `r` resize (`"COLSxROWS"`), `m` marker. */
export const CAST_EVENT_CODES = ["o", "i", "r", "m"] as const;

/** An asciicast v2 event code. */
export type CastEventCode = typeof CAST_EVENT_CODES[number];

/** One event line: seconds since the start, the code, and its data. */
export const CastEventSchema = z.tuple([
  z.number().nonnegative().describe("Seconds since the start"),
  z.enum(CAST_EVENT_CODES),
  z.string(),
]);

/** One event of a recording. */
export type CastEvent = z.infer<typeof CastEventSchema>;

/** The header fields Specter writes: all of them but the title, which is omitted when absent. */
export interface CastStart {
  /** Terminal columns at start. */
  readonly width: number;
  /** Terminal rows at start. */
  readonly height: number;
  /** Unix time (seconds) of the start. */
  readonly timestamp: number;
  /** Environment facts players use (`TERM`, `SHELL`); never other variables. */
  readonly env: Readonly<Record<string, string>>;
  /** Title shown by players. */
  readonly title?: string;
}

/**
 * The one writer of the header: validated, then one line of JSON (no newline) in the schema's key order,
 * `version` first.
 */
export function encodeCastHeader(header: CastStart): string {
  return JSON.stringify(CastHeaderSchema.parse({ version: 2, ...header }));
}

/** The one writer of an event: validated, then one line of JSON (no newline). */
export function encodeCastEvent(event: CastEvent): string {
  return JSON.stringify(CastEventSchema.parse(event));
}

/** The one reader of the header line (a problem is a sentence fragment about the recording). */
export function decodeCastHeader(line: string): { value: CastHeader } | DecodeProblem {
  const decoded = decodeWith(CastHeaderSchema, line);
  return "value" in decoded ? decoded : { problem: "does not start with an asciicast v2 header" };
}

/** The one reader of an event line; `lineNumber` (1-based, the header is line 1) names it in a problem. */
export function decodeCastEvent(line: string, lineNumber: number): { value: CastEvent } | DecodeProblem {
  const decoded = decodeWith(CastEventSchema, line);
  return "value" in decoded ? decoded : { problem: `line ${lineNumber} is not an asciicast event` };
}
