/**
 * A recording (asciicast v2) read in a view, offline: its output events are fed to the view, which is
 * flushed wherever the program paused for at least {@link SETTLE_SECONDS} (as a live view is flushed when
 * the program goes quiet), and at the end.
 *
 * @module
 */
import {
  type CastHeader,
  decodeCastEvent,
  decodeCastHeader,
  MAX_COLS,
  MAX_ROWS,
  type TokenMode,
  type ViewEvent,
} from "../protocol/mod.ts";
import { CompactView } from "./compact.ts";
import { ParsedView, SETTLE_SECONDS } from "./parsed.ts";

export { SETTLE_SECONDS };

/**
 * The terminal a recording is parsed in: its size, cut to the largest terminal Specter makes
 * ({@link MAX_COLS} × {@link MAX_ROWS}). A recording is a file from anywhere, and the emulator allocates
 * every cell of its screen: a header of 2^31 columns would take all the memory there is.
 */
export function viewSize(cols: number | undefined, rows: number | undefined): { cols: number; rows: number } {
  return { cols: Math.min(cols ?? 80, MAX_COLS), rows: Math.min(rows ?? 24, MAX_ROWS) };
}

/** A recording's header and events, already read and validated. */
export interface Recording {
  readonly header: CastHeader;
  readonly events: readonly (readonly [number, string, string])[];
}

/**
 * Reads an asciicast v2 recording (every line through the format's reader in `protocol/`), or says what is
 * wrong with it (a sentence fragment such as `line 3 is not an asciicast event`).
 */
export function parseRecording(text: string): Recording | { problem: string } {
  const [header = "", ...lines] = text.trimEnd().split("\n");
  const start = decodeCastHeader(header);
  if ("problem" in start) return start;
  const events: (readonly [number, string, string])[] = [];
  for (const [i, line] of lines.entries()) {
    const event = decodeCastEvent(line, i + 2);
    if ("problem" in event) return event;
    events.push(event.value);
  }
  return { header: start.value, events };
}

/** The events of `recording`'s output in `mode` (compact or parsed), each with its `time`. */
export async function viewRecording(
  recording: Recording,
  mode: Exclude<TokenMode, "raw">,
): Promise<ViewEvent[]> {
  const { header } = recording;
  const view = mode === "compact"
    ? new CompactView()
    : await ParsedView.create(viewSize(header.width, header.height));
  const out: ViewEvent[] = [];
  const at = (time: number) => (events: readonly ViewEvent[]) => {
    for (const event of events) out.push({ ...event, time: Math.round(time * 1e6) / 1e6 });
  };
  const output = recording.events.filter((e) => e[1] === "o" || e[1] === "r" || e[1] === "i");
  for (const [i, [time, code, data]] of output.entries()) {
    if (code === "i") {
      if (view instanceof ParsedView) view.input();
      continue;
    }
    if (code === "r") {
      const [cols, rows] = data.split("x").map(Number);
      if (view instanceof ParsedView && cols! > 0 && rows! > 0) {
        const size = viewSize(cols, rows);
        view.resize(size.cols, size.rows);
      }
      continue;
    }
    if (view instanceof ParsedView) view.push(data, time);
    else view.push(data);
    const next = output[i + 1];
    if (next !== undefined && next[0] - time >= SETTLE_SECONDS) {
      // Flushed as a live view is: once the program has been quiet that long.
      at(time)(await view.flush({ partial: true, now: time + SETTLE_SECONDS }));
    }
  }
  const last = output.length > 0 ? output[output.length - 1]![0] : 0;
  at(last)(await view.end());
  return out;
}
