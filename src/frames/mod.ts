/**
 * The wire encodings of frames and driver input: NDJSON/length-prefixed framing, UTF-8 chunking and
 * base64, driver line splitting. The formats themselves are in `protocol/`.
 *
 * @module
 */
export { type DriverLineOptions, type DriverLineResult, DriverLineSplitter } from "./driver_lines.ts";
export { decodeStream, encodeFrames, encodeUtf8, type Framing, FRAMINGS } from "./encode.ts";
export {
  concatBytes,
  fromBase64,
  incompleteTail,
  type Payload,
  payloadText,
  toBase64,
  toPayload,
  Utf8Chunker,
} from "./utf8.ts";
