/**
 * Reading an asciicast v2 recording back as the plain text its output events show (for `verify` against
 * a `.cast` golden and for `replay`).
 *
 * @module
 */
import { z } from "zod";
import { plainText } from "../session/mod.ts";

const HeaderSchema = z.object({ version: z.literal(2) });
const EventSchema = z.tuple([z.number(), z.string(), z.string()]);

function json(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined; // Fails the schema check that follows, which names the line.
  }
}

/**
 * The output events (`"o"`) of a recording as plain text, or what is wrong with the recording (a sentence
 * fragment such as `line 3 is not an asciicast event`).
 */
export function castTranscript(text: string): { text: string } | { problem: string } {
  const [header = "", ...lines] = text.trimEnd().split("\n");
  if (!HeaderSchema.safeParse(json(header)).success) {
    return { problem: "does not start with an asciicast v2 header" };
  }
  const output: string[] = [];
  for (const [i, line] of lines.entries()) {
    const event = EventSchema.safeParse(json(line));
    if (!event.success) return { problem: `line ${i + 2} is not an asciicast event` };
    if (event.data[1] === "o") output.push(event.data[2]);
  }
  return { text: plainText(output.join("")) };
}
