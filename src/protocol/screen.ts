/**
 * `ScreenSnapshot`: what a terminal shows at one moment (the `snapshot` frame's `screen`, golden files'
 * JSON form).
 *
 * @module
 */
import { z } from "zod";

/**
 * A colour: absent means the terminal's default, an integer 0–255 is a palette index (0–7 the ANSI
 * colours, 8–15 their bright variants), a string `#rrggbb` is a true colour.
 */
export const ColorSchema: z.ZodUnion<[z.ZodInt, z.ZodString]> = z.union([
  z.int().min(0).max(255),
  z.string().regex(/^#[0-9a-f]{6}$/),
]);
/** A colour of a {@link CellRun}. */
export type Color = z.infer<typeof ColorSchema>;

/**
 * Consecutive cells of one line with the same attributes. Absent fields are the defaults (default
 * colours, attribute off), so plain text is just `{"text": "…"}`.
 */
export const CellRunSchema = z.strictObject({
  text: z.string().describe("The characters of the run (a wide character counts once)"),
  fg: ColorSchema.optional().describe("Foreground: palette index 0-255 or #rrggbb; absent: default"),
  bg: ColorSchema.optional().describe("Background: palette index 0-255 or #rrggbb; absent: default"),
  bold: z.literal(true).optional(),
  dim: z.literal(true).optional(),
  italic: z.literal(true).optional(),
  underline: z.literal(true).optional(),
  inverse: z.literal(true).optional(),
});
/** A run of identically styled cells. */
export type CellRun = z.infer<typeof CellRunSchema>;

/** What the terminal shows: the visible screen, cursor, modes and title. */
export const ScreenSnapshotSchema = z.strictObject({
  cols: z.int().positive(),
  rows: z.int().positive(),
  cursor: z.strictObject({
    x: z.int().nonnegative().describe("Column, 0-based"),
    y: z.int().nonnegative().describe("Row of the visible screen, 0-based"),
    visible: z.boolean().describe("False after DECTCEM off (ESC [?25l)"),
  }),
  alt_screen: z.boolean().describe("True while the alternate screen (ESC [?1049h and kin) is active"),
  title: z.string().describe('The window title set by OSC 0 or OSC 2; "" when never set'),
  partial: z.boolean().describe(
    "True when the screen may lack output: the model was built late and older output was no longer " +
      "retained, or the program was killed (timeout, ceiling) or exited with output the model had no time " +
      "left to parse",
  ),
  lines: z.array(z.string()).describe(
    "The visible screen, top to bottom; each line's trailing blanks and the trailing empty lines trimmed",
  ),
  cells: z.array(z.array(CellRunSchema)).optional().describe(
    "Only when asked for: per row, the styled runs up to its last non-blank or styled cell (trailing styled blanks are kept, unlike in lines)",
  ),
});
/** A snapshot of the screen. */
export type ScreenSnapshot = z.infer<typeof ScreenSnapshotSchema>;
