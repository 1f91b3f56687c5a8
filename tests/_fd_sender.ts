/**
 * A test helper process: starts `cat` on a terminal, sends the terminal's master over the unix socket on
 * fd 3 (with `cat`'s pid as the payload), then waits to be killed. See tests/fd_passing_test.ts.
 */
import { sendFds, spawnOnPty } from "../src/pty/mod.ts";

const child = spawnOnPty({ argv: ["/bin/cat"], env: { PATH: "/usr/bin:/bin" }, cols: 80, rows: 24 });
sendFds(3, [child.master], new TextEncoder().encode(String(child.pid)));
setInterval(() => {}, 60_000); // Until SIGKILL.
