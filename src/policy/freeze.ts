/**
 * Deep freezing: a resolved policy is shared by every backend and, later, hashed for audit, so nothing
 * may change it after validation.
 *
 * @module
 */

/**
 * Freezes `value` and every object and array reachable from it (also below an already frozen object);
 * returns `value`. Primitives pass through.
 */
export function deepFreeze<T>(value: T): T {
  freeze(value, new Set());
  return value;
}

function freeze(value: unknown, seen: Set<object>): void {
  if (typeof value !== "object" || value === null || seen.has(value)) return;
  seen.add(value); // Guards against cycles.
  for (const key of Reflect.ownKeys(value)) freeze((value as Record<PropertyKey, unknown>)[key], seen);
  Object.freeze(value);
}
