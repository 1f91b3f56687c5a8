/**
 * Reading an asciicast v2 recording back as the plain text its output events show (for `verify` against
 * a `.cast` golden and for `replay`). Every line goes through the format's reader in `protocol/`.
 *
 * @module
 */
import { plainText } from "../session/mod.ts";
import { parseRecording } from "../views/mod.ts";

/**
 * The output events (`"o"`) of a recording as plain text, or what is wrong with the recording (a sentence
 * fragment such as `line 3 is not an asciicast event`).
 */
export function castTranscript(text: string): { text: string } | { problem: string } {
  const recording = parseRecording(text);
  if ("problem" in recording) return recording;
  return { text: plainText(recording.events.filter((e) => e[1] === "o").map((e) => e[2]).join("")) };
}
