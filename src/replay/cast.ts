/**
 * Reading an asciicast v2 recording back as the plain text its output events show (for `verify` against
 * a `.cast` golden and for `replay`). Every line goes through the format's reader in `protocol/`.
 *
 * @module
 */
import { decodeCastEvent, decodeCastHeader } from "../protocol/mod.ts";
import { plainText } from "../session/mod.ts";

/**
 * The output events (`"o"`) of a recording as plain text, or what is wrong with the recording (a sentence
 * fragment such as `line 3 is not an asciicast event`).
 */
export function castTranscript(text: string): { text: string } | { problem: string } {
  const [header = "", ...lines] = text.trimEnd().split("\n");
  const start = decodeCastHeader(header);
  if ("problem" in start) return start;
  const output: string[] = [];
  for (const [i, line] of lines.entries()) {
    const event = decodeCastEvent(line, i + 2);
    if ("problem" in event) return event;
    if (event.value[1] === "o") output.push(event.value[2]);
  }
  return { text: plainText(output.join("")) };
}
