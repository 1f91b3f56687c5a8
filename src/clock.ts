/**
 * The wall clock as Specter stamps frames, audit records and recordings with it.
 *
 * @module
 */

/** What a wait that ran out of time gives instead of a value (a regex match, a screen, an exit). */
export const TIMED_OUT: unique symbol = Symbol("timed out");

/**
 * `promise`'s value, or {@link TIMED_OUT} when it has not settled within `ms` (a rejection within `ms` is
 * passed on; a later one is ignored). The timer is cleared either way, so it never keeps the process alive.
 */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), Math.max(0, ms));
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Seconds since the epoch with microsecond precision. */
export function nowSeconds(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000) / 1e6;
}
