/**
 * Output that makes xterm itself throw never ends Specter. xterm 6.0.0 can leave a row of the screen
 * without a buffer line after a resize (xtermjs/xterm.js#6063); an erase or a line feed there throws
 * inside xterm's own parse timer, which used to be an uncaught error: the supervisor died with the
 * program still running and no exit frame or artifact written. The terminal fuzzer found it.
 */
import assert from "node:assert/strict";
import { sessionTest, spawnSession } from "./_helpers.ts";

/** Waits for the resize (SIGWINCH), then prints the sequence that breaks xterm, then a line, then exits. */
const PROGRAM = String.raw`
import os, signal, time
signal.sigwait([signal.SIGWINCH]) if hasattr(signal, "sigwait") else None
os.write(1, b"\x1b[7I\x1b[?1049h\x0b\x1b[1J")  # VT: a line feed that onlcr leaves alone
time.sleep(0.2)
os.write(1, b"after the fault")
time.sleep(0.3)
`;

sessionTest(
  "a program whose output makes xterm throw after a resize cannot end the session early",
  async () => {
    const uncaught: unknown[] = [];
    const onError = (event: ErrorEvent) => {
      event.preventDefault(); // Recorded and failed on below, rather than ending the test runner.
      uncaught.push(event.error);
    };
    globalThis.addEventListener("error", onError);
    try {
      const session = spawnSession({
        // SIGWINCH is blocked first so that sigwait() takes it whenever it comes.
        argv: [
          "/usr/bin/python3",
          "-c",
          `import signal; signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGWINCH])\n${PROGRAM}`,
        ],
        cols: 80,
        rows: 24,
        screen: true,
        idleMs: 0,
        sandbox: { mode: "none", acknowledge: "unsafe-no-sandbox" },
      });
      const drained = (async () => {
        for await (const _ of session.frames()) { /* the exit and the screen are what matter */ }
      })();
      await new Promise((resolve) => setTimeout(resolve, 300));
      session.resize(31, 2);
      const exit = await session.exited;
      await drained;
      const screen = await session.screen();
      assert.equal(exit.code, 0);
      assert.equal(screen.partial, true, "output was lost to the fault, and the snapshot says so");
      assert.deepEqual([screen.cols, screen.rows], [31, 2]);
      assert.deepEqual(screen.lines, ["after the fault"]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(uncaught, []);
    } finally {
      globalThis.removeEventListener("error", onError);
    }
  },
);
