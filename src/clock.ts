/**
 * The wall clock as Specter stamps frames, audit records and recordings with it.
 *
 * @module
 */

/** Seconds since the epoch with microsecond precision. */
export function nowSeconds(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000) / 1e6;
}
