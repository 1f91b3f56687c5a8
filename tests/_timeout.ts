/**
 * A promise raced against a timer, the timer cleared either way. Imports nothing and does nothing when
 * imported: both the test task's preload (`_deadline.ts`) and `_helpers.ts`'s `withTimeout` use it, and
 * the preload must not load `_helpers.ts` (which sets the XDG directories and imports the library).
 *
 * @module
 */

/** `promise`, or a rejection with `timeout()`'s error once `ms` have passed first. */
export async function raceTimer<T>(promise: Promise<T>, ms: number, timeout: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timeout()), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}
