/**
 * `specter view [--mode compact|parsed] [--text] FILE.cast`: a recording read in a token view, offline, so
 * that recordings can be inspected and measured (see `src/views/`).
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import { didYouMean } from "../protocol/mod.ts";
import { readRegularFile } from "../fsafe/mod.ts";
import { parseRecording, renderText, viewRecording } from "../views/mod.ts";
import { parseFlags } from "./flags.ts";
import { type CommandDoc, commandOptions, type FlagTable, HELP_FLAG } from "./flag_table.ts";

/** Largest recording `view` reads. */
export const MAX_RECORDING_BYTES = 256 * 1024 * 1024;

const VIEW_FLAGS = {
  mode: {
    type: "string",
    value: "MODE",
    description: "compact (default): text without styling, redraws collapsed, repeats counted; parsed: " +
      "screen-aware, full-screen programs as their screen and the rows that changed",
  },
  text: {
    type: "boolean",
    description: "Print the view as the plain text an agent reads, not NDJSON events",
  },
  ...HELP_FLAG,
} as const satisfies FlagTable;

/** `specter view`'s help. */
export const VIEW_DOC: CommandDoc = {
  name: "view",
  usage: ["specter view [--mode compact|parsed] [--text] FILE.cast"],
  about: `Reads an asciicast v2 recording (--record FILE.cast, a bundle's session.cast) in a token view and
prints one JSON event per line (spec/schema/view-event.schema.json): text, line_update, screen, rows,
prompt, each with its time in the recording. The view is flushed wherever the program paused for 200 ms
or more, as a live view is when the program goes quiet. --text prints what an agent would read instead.
Exits 0, or 2 for bad usage or a file that is not an asciicast v2 recording of at most 256 MiB.
  specter view --mode parsed --text session.cast`,
  groups: [{ title: "View flags", flags: VIEW_FLAGS }],
};

/** Runs `specter view …`; returns the exit code. */
export async function viewCommand(args: readonly string[], out: (text: string) => void): Promise<number> {
  const { values, positionals } = parseFlags(args, commandOptions(VIEW_DOC));
  if (positionals.length !== 1) throw new UsageError("Expected one recording (specter view FILE.cast)");
  const mode = values.mode ?? "compact";
  if (mode !== "compact" && mode !== "parsed") {
    throw new UsageError(
      `Flag "--mode" must be compact or parsed, got "${String(mode).slice(0, 80)}"${
        didYouMean(String(mode), ["compact", "parsed"])
      }`,
    );
  }
  const file = positionals[0]!;
  const bytes = readRegularFile(file, { maxBytes: MAX_RECORDING_BYTES, what: "recording" });
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (error: unknown) {
    throw new UsageError(`Recording "${file}" is not valid UTF-8`, { cause: error });
  }
  const recording = parseRecording(text);
  if ("problem" in recording) throw new UsageError(`Recording "${file}" ${recording.problem}`);
  const events = await viewRecording(recording, mode);
  if (values.text === true) {
    const rendered = renderText(events);
    out(rendered.endsWith("\n") ? rendered.slice(0, -1) : rendered);
  } else {
    for (const event of events) out(JSON.stringify(event));
  }
  return 0;
}
