/**
 * Recordings of sessions (asciicast v2).
 *
 * @module
 */
export { CastWriter } from "./asciicast.ts";
