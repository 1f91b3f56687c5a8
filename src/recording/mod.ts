/**
 * Recordings of sessions (asciicast v2).
 *
 * @module
 */
export { type CastEventCode, type CastHeader, CastWriter } from "./asciicast.ts";
