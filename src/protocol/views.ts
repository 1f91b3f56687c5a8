/**
 * Token views: what the compact and parsed views of a session report (`specter view`, and the agent tools'
 * `token_mode`). The raw view is the frames themselves (`frames.ts`).
 *
 * @module
 */
import { z } from "zod";

/** The views a session's output can be read in. */
export const TOKEN_MODES = ["raw", "compact", "parsed"] as const;
/** A view name. */
export const TokenModeSchema: z.ZodEnum<{ [K in typeof TOKEN_MODES[number]]: K }> = z.enum(TOKEN_MODES);
/** A view name. */
export type TokenMode = z.infer<typeof TokenModeSchema>;

const where = {
  seq: z.int().nonnegative().optional().describe("The last raw frame this event covers (live views)"),
  time: z.number().nonnegative().optional().describe("Seconds since the recording's start (recordings)"),
};

/** Output text, escape sequences removed: whole lines, or at a pause the start of an unfinished one. */
export const ViewTextSchema = z.object({
  type: z.literal("text"),
  data: z.string().describe("Text, at most 512 UTF-8 bytes, cut at line ends where possible"),
  ...where,
});

/** The current state of a line being redrawn in place (progress bar, spinner) or of a status row. */
export const LineUpdateSchema = z.object({
  type: z.literal("line_update"),
  data: z.string().describe(
    "The line's text; empty for a status row the program took away (its progress ended)",
  ),
  row: z.int().positive().optional().describe("1-based row of a status row drawn away from the cursor"),
  ...where,
});

/** The whole screen of a full-screen program as text, once it settled (parsed view). */
export const ScreenViewSchema = z.object({
  type: z.literal("screen"),
  rows: z.array(z.string()).describe("Top to bottom, trailing blanks and trailing empty rows trimmed"),
  alternate: z.boolean().describe("True on the alternate screen"),
  ...where,
});

/** Rows that changed since the last screen or rows event (parsed view). */
export const RowsViewSchema = z.object({
  type: z.literal("rows"),
  scrolled: z.int().positive().optional().describe(
    "The rows last shown moved up this many rows first (the top ones left the screen); then the listed rows changed",
  ),
  rows: z.array(z.object({ row: z.int().positive(), text: z.string() })),
  ...where,
});

/** The program waits at a pager's prompt; the prompt is not content. */
export const PagerPromptSchema = z.object({
  type: z.literal("prompt"),
  kind: z.literal("pager"),
  text: z.string().describe('The prompt as shown, e.g. "--More--(42%)" or "(END)"'),
  ...where,
});

/** Anything a compact or parsed view reports. */
export const ViewEventSchema = z.discriminatedUnion("type", [
  ViewTextSchema,
  LineUpdateSchema,
  ScreenViewSchema,
  RowsViewSchema,
  PagerPromptSchema,
]);
/** Anything a compact or parsed view reports. */
export type ViewEvent = z.infer<typeof ViewEventSchema>;
