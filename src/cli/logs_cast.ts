/**
 * `specter logs NAME --cast FILE`: a logged session's frames as an asciicast v2 recording, written by the
 * one `.cast` writer ({@link CastWriter}): the `start` frame gives the header, `stdout` frames the output
 * events, `resize` frames the resize events, at their times since the start.
 *
 * @module
 */
import { payloadText } from "../frames/mod.ts";
import type { Frame } from "../protocol/mod.ts";
import { CastWriter } from "../recording/mod.ts";

/**
 * Writes `frames` (a session's, in seq order) to `path` as asciicast v2 (`E_RECORD` when it cannot be
 * written: a symlink or a FIFO there is refused, as for `run --record`). Returns the events written.
 */
export function writeCastOf(frames: readonly Frame[], path: string, title: string): number {
  const start = frames.find((frame) => frame.type === "start");
  const t0 = start?.ts ?? frames[0]?.ts ?? 0;
  const writer = CastWriter.create(path, {
    width: start?.type === "start" ? start.cols : 80,
    height: start?.type === "start" ? start.rows : 24,
    timestamp: Math.floor(t0),
    env: { TERM: "xterm-256color" },
    title,
  });
  let events = 0;
  try {
    for (const frame of frames) {
      // Frames are in seq order; a clock stepped back must not make times go backwards.
      const at = Math.max(0, frame.ts - t0);
      if (frame.type === "stdout") writer.event(at, "o", payloadText(frame));
      else if (frame.type === "resize") writer.event(at, "r", `${frame.cols}x${frame.rows}`);
      else continue;
      events++;
    }
  } finally {
    writer.close();
  }
  return events;
}
