/**
 * A logged session's frames as an asciicast v2 recording, for the replay page's player: `start` gives the
 * header, `stdout` the output events, `resize` the resize events. Pure (no DOM), unit-tested.
 *
 * @module
 */
import { encodeCastEvent, encodeCastHeader, type Frame } from "../../../src/protocol/mod.ts";

function bytesOf(data: string): Uint8Array {
  const text = atob(data);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/** The recording of `frames` (a session's, in seq order). */
export function castOf(frames: readonly Frame[], title: string): string {
  const start = frames.find((frame) => frame.type === "start");
  const t0 = start?.ts ?? frames[0]?.ts ?? 0;
  const lines = [
    encodeCastHeader({
      width: start?.type === "start" ? start.cols : 80,
      height: start?.type === "start" ? start.rows : 24,
      timestamp: Math.floor(t0),
      env: { TERM: "xterm-256color" },
      title,
    }),
  ];
  const decoder = new TextDecoder();
  for (const frame of frames) {
    const at = Math.max(0, Math.round((frame.ts - t0) * 1e6) / 1e6);
    if (frame.type === "stdout") {
      const text = frame.binary === true ? decoder.decode(bytesOf(frame.data), { stream: true }) : frame.data;
      lines.push(encodeCastEvent([at, "o", text]));
    } else if (frame.type === "resize") {
      lines.push(encodeCastEvent([at, "r", `${frame.cols}x${frame.rows}`]));
    }
  }
  return lines.join("\n") + "\n";
}
