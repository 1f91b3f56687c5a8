/**
 * A floor of `bench:daemon`: the terminal floor (`terminal.ts`) plus zod, which the daemon needs to check
 * every request against the protocol's schemas (`_floors.ts` measures it).
 *
 * @module
 */
import { z } from "zod";
import { libc } from "../../../src/pty/mod.ts";

libc();
z.object({ method: z.string() }).parse({ method: "floor" });
setTimeout(() => {}, 600_000);
