/**
 * The in-process SDK for Deno: `run(cmd, { mode })` yields a program's frames; `Session.spawn(argv)` with
 * `frames({ mode })`, `expect`, `send`, `press` and `screen()`; `specter.exec(cmd)` with the `exec_command`
 * result; a `SessionPool` with `lease()` / `release()`. The same shapes as the clients for Node and Python
 * (`clients/`), without a process boundary.
 *
 * ```ts
 * import { Session, specter } from "@specter/specter/sdk";
 * const repl = await Session.spawn(["python3", "-q"]);
 * repl.send("6 * 7\r");
 * await repl.expect(/^42/m);
 * console.log((await specter.exec("echo hi")).output);
 * ```
 *
 * @module
 */
export { type ExpectMatch, frameText, run, Session, type SessionSpawnOptions } from "./session.ts";
export { createSpecter, type Lease, SessionPool, type Specter, specter } from "./specter.ts";
export type { ViewFrame } from "../agent/mod.ts";
