/**
 * ctrl-c in a sandboxed session reaches the program and only the program: the sandbox's own processes
 * (bwrap outside and its init inside) are not in the terminal's session, so a program that catches SIGINT
 * (a Python REPL, a shell without job control) goes on, and one that does not dies of it as the program.
 */
import assert from "node:assert/strict";
import { sessionTest } from "../_helpers.ts";
import { Transcript } from "../../src/mod.ts";
import { spawn } from "../../src/session/spawn_session.ts";
import { preset, PYTHON } from "./_sandbox.ts";

function sandboxed(argv: string[], options: { tty?: boolean } = {}): Transcript {
  return new Transcript(spawn({
    argv,
    env: { PYTHON_BASIC_REPL: "1" },
    idleMs: 0,
    timeoutMs: 30_000,
    ...options,
    sandbox: { mode: "bwrap", policy: preset("basic") },
  }));
}

sessionTest("sandbox: a Python REPL takes ctrl-c as KeyboardInterrupt and goes on", async () => {
  const r = sandboxed([PYTHON, "-q", "-i"]);
  await r.output(">>> ", 10_000);
  let mark = r.text.length;
  r.session.write("import time; time.sleep(30)\r");
  await r.output("time.sleep(30)\r\n", 5_000, mark);
  await new Promise((resolve) => setTimeout(resolve, 300)); // Let Python start sleeping.
  mark = r.text.length;
  r.session.press("ctrl-c");
  await r.output(/KeyboardInterrupt[\s\S]*>>> $/, 10_000, mark);
  // Once more at the prompt (one at a time: Python raises a second SIGINT that comes during the first's
  // handling at its next statement): still alive.
  mark = r.text.length;
  r.session.press("ctrl-c");
  await r.output(/KeyboardInterrupt\r\n>>> $/, 10_000, mark);
  mark = r.text.length;
  r.session.write("print(6 * 7)\r");
  await r.output(/42\r\n>>> $/, 10_000, mark);
  assert.equal(r.frames.some((f) => f.type === "pty_exited"), false, "The session ended");
  r.session.write("exit(5)\r");
  const exit = await r.exit(10_000);
  assert.equal(exit.code, 5, JSON.stringify(exit));
});

sessionTest("sandbox: a program that does not catch ctrl-c dies of SIGINT itself", async () => {
  const r = sandboxed(["/usr/bin/cat"]);
  await r.until((f) => f.type === "start", 10_000, "start");
  r.session.write("hello\r");
  await r.output(/hello\r\nhello\r\n/, 10_000);
  r.session.press("ctrl-c");
  const exit = await r.exit(10_000);
  assert.equal(exit.code, null, JSON.stringify(exit));
  assert.equal(exit.signal, "INT", JSON.stringify(exit));
});

sessionTest(
  "sandbox: /dev/tty is the program's controlling terminal, its group is the foreground",
  async () => {
    // `ps -o` is not in the sandbox: the kernel's own view (/proc/self/stat: pgrp, session, tty_nr, tpgid).
    const r = sandboxed([
      PYTHON,
      "-c",
      "import os; f = open('/proc/self/stat').read().rsplit(')', 1)[1].split(); " +
      "pid = os.getpid(); print('ME', pid, 'PGRP', f[2], 'SID', f[3], 'TPGID', f[5]); " +
      "fd = os.open('/dev/tty', os.O_RDWR); os.write(fd, b'TTY-OK\\r\\n')",
    ]);
    const exit = await r.exit(15_000);
    assert.equal(exit.code, 0, r.text);
    const match = r.text.match(/ME (\d+) PGRP (\d+) SID (\d+) TPGID (\d+)/);
    assert(match !== null, r.text);
    const [, pid, pgrp, sid, tpgid] = match;
    // The program leads its own session and group, which is the terminal's foreground group.
    assert.deepEqual([pgrp, sid, tpgid], [pid, pid, pid], r.text);
    assert.match(r.text, /TTY-OK/);
  },
);
