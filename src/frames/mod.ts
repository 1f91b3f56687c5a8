/**
 * Frames (what Specter emits), driver messages (what drivers send) and their wire encodings.
 *
 * @module
 */
export * from "./schema.ts";
export * from "./driver.ts";
export { type DriverLineResult, DriverLineSplitter } from "./driver_lines.ts";
export { decodeStream, encodeFrames, type Framing, FRAMINGS } from "./encode.ts";
export { fromBase64, incompleteTail, type Payload, toBase64, Utf8Chunker } from "./utf8.ts";
export {
  clip,
  DRIVER_SIGNALS,
  type DriverMessage,
  isBase64,
  MAX_COLS,
  MAX_ROWS,
  parseDriverLine,
} from "./driver.ts";
export { type ExitFrame, type Frame, type FrameBody, FrameSchema, type SessionInfo } from "./schema.ts";
