/**
 * The Specter version, kept equal to `deno.json` by a test (imported, not read at run time, so a
 * compiled binary needs no source files).
 *
 * @module
 */

/** Specter's version. */
export const VERSION = "0.6.0";
