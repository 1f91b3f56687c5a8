/**
 * Renders a command's help text from its {@link CommandDoc}: usage lines, the prose as written, then each
 * flag group as a column of flags and their descriptions, wrapped.
 *
 * @module
 */
import { type CommandDoc, type FlagGroup, flagLabel } from "./flag_table.ts";

/** Widest help line: the hand-written prose is wrapped at about this width too. */
export const HELP_WIDTH = 108;

/** Column where flag descriptions start (two spaces of indent, the flag, at least two spaces). */
export const DESCRIPTION_COLUMN = 27;

/**
 * Splits `text` into lines of at most `width` characters at spaces (a word longer than `width` gets a
 * line of its own rather than being cut).
 */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line === "") line = word;
    else if (line.length + 1 + word.length <= width) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line !== "") lines.push(line);
  return lines;
}

/**
 * One group: its title, a line per flag (the description wrapped beside the flag; a flag too wide for
 * its column puts the description on the lines below it), then the note.
 */
function formatGroup(group: FlagGroup): string {
  const indent = " ".repeat(DESCRIPTION_COLUMN);
  const lines = [`${group.title}:`];
  for (const [name, flag] of Object.entries(group.flags)) {
    const label = `  ${flagLabel(name, flag)}`;
    const description = wrap(flag.description, HELP_WIDTH - DESCRIPTION_COLUMN);
    if (label.length + 2 > DESCRIPTION_COLUMN) lines.push(label);
    else lines.push(label.padEnd(DESCRIPTION_COLUMN) + (description.shift() ?? ""));
    lines.push(...description.map((part) => indent + part));
  }
  if (group.note !== undefined) lines.push(...wrap(group.note, HELP_WIDTH));
  return lines.join("\n");
}

/** The text `specter help CMD` prints. */
export function formatHelp(doc: CommandDoc): string {
  const usage = doc.usage.map((line, i) => `${i === 0 ? "Usage: " : "       "}${line}`).join("\n");
  return [usage, doc.about, ...doc.groups.map(formatGroup)].join("\n\n");
}
