/**
 * A floor of `bench:daemon`: a Deno process with Specter's libc binding bound (the PTY layer, Deno FFI), as
 * any process that holds a terminal has it, the keeper and the daemon alike (`_floors.ts` measures it).
 *
 * @module
 */
import { libc } from "../../../src/pty/mod.ts";

libc();
setTimeout(() => {}, 600_000);
