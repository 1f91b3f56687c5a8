/**
 * The bound on durations in every wire and file format. A timer waits at most 2^31 - 1 ms: a longer delay
 * does not fit its signed 32-bit field, and the timer fires at once (a `terminate` with a grace of 2^31 ms
 * killed at once). So every duration field of a format (driver messages, scenario and policy files, saved
 * sessions) takes at most {@link MAX_DURATION_MS}, refused by its schema when longer, and the CLI's
 * duration flags take the same.
 *
 * @module
 */

/** The longest duration any format or flag takes: 2^31 - 1 ms (about 24.8 days), the most a timer can wait. */
export const MAX_DURATION_MS = 2 ** 31 - 1;

/** What a schema says of a duration over {@link MAX_DURATION_MS}. */
export const DURATION_TOO_LONG =
  `must be at most ${MAX_DURATION_MS} ms (2^31 - 1, the longest a timer waits)`;
