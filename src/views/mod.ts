/**
 * Token views of a program's output: compact (text without styling, redraws collapsed, repeats counted)
 * and parsed (screen-aware for full-screen programs). See `compact.ts` and `parsed.ts`.
 *
 * @module
 */
export { CHUNK_BYTES, chunks, CompactView, type FlushOptions, PAGER_PROMPT } from "./compact.ts";
export { ParsedView, type ParsedViewOptions, screenDiff } from "./parsed.ts";
export { screenOf } from "./screen_of.ts";
export { renderText } from "./render.ts";
export { parseRecording, type Recording, SETTLE_SECONDS, viewRecording } from "./recording.ts";
