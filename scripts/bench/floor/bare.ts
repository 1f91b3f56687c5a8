/**
 * A floor of `bench:daemon`: a Deno process that imports nothing and waits (`_floors.ts` measures it).
 *
 * @module
 */
setTimeout(() => {}, 600_000);
