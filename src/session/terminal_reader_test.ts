import assert from "node:assert/strict";
import { libc, openPty } from "../pty/mod.ts";
import { READ_TURN_MS, TerminalReader, type TerminalReaderHooks } from "./terminal_reader.ts";

/** A terminal whose other side the test writes and closes, read by a reader with recording hooks. */
function setup(useThread: boolean) {
  const pty = openPty(80, 24);
  const lib = libc();
  let text = "";
  let eofs = 0;
  let blocked = false;
  const failures: unknown[] = [];
  const hooks: TerminalReaderHooks = {
    output: (bytes) => text += new TextDecoder().decode(bytes),
    eof: () => eofs++,
    blocked: () => blocked,
    wantsWrite: () => false,
    writable: () => {},
    fail: (error) => failures.push(error),
    released: () => {},
    later: (ms, fn) => void setTimeout(fn, ms),
  };
  const reader = new TerminalReader(pty.master, useThread, hooks);
  return {
    reader,
    write: (s: string) => {
      const bytes = new TextEncoder().encode(s);
      assert.equal(Number(lib.sym.write(pty.slave, bytes, BigInt(bytes.length))), bytes.length);
    },
    closeSlave: () => lib.sym.close(pty.slave),
    closeMaster: () => lib.sym.close(pty.master),
    text: () => text,
    eofs: () => eofs,
    block: (on: boolean) => blocked = on,
    failures,
  };
}

async function until(check: () => boolean, what: string, ms = 5000) {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

for (const useThread of [false, true]) {
  const on = useThread ? "on the reader thread" : "on the JS thread";
  Deno.test(`terminal reader ${on}: output in order, then one EOF when the other side closes`, async () => {
    const t = setup(useThread);
    try {
      t.write("hello ");
      await until(() => t.text().includes("hello"), "the first output");
      t.write("world");
      await until(() => t.text().endsWith("world"), "the second output");
      assert.equal(t.text(), "hello world");
      t.closeSlave();
      await until(() => t.eofs() === 1, "EOF");
      assert.equal(t.reader.eof, true);
      await until(() => t.reader.closable(), "the thread letting go");
      assert.equal(t.eofs(), 1);
      assert.deepEqual(t.failures, []);
    } finally {
      t.closeMaster();
    }
  });

  Deno.test(`terminal reader ${on}: nothing is read while blocked, and everything once woken`, async () => {
    const t = setup(useThread);
    try {
      t.block(true);
      t.write("held back");
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(t.text(), "");
      t.block(false);
      t.reader.wake();
      await until(() => t.text() === "held back", "the output after the pause");
      t.closeSlave();
      await until(() => t.reader.eof, "EOF");
    } finally {
      t.closeMaster();
    }
  });
}

// On the JS thread a turn ends at EAGAIN anyway (the terminal holds less than one 64 KiB buffer); the
// reader thread's ring holds up to megabytes, so only the time bound ends a turn there.
Deno.test("terminal reader on the reader thread: a turn ends after READ_TURN_MS of costly output, not after 1 MiB", async () => {
  const pty = openPty(80, 24);
  const lib = libc();
  // A program that keeps the terminal full: every read finds a whole buffer waiting.
  const writer = new Deno.Command("/usr/bin/python3", {
    args: [
      "-c",
      `import os\nfd = os.open('/proc/${Deno.pid}/fd/${pty.slave}', os.O_WRONLY)\nwhile True: os.write(fd, b'x' * 65536)`,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  let calls = 0;
  let inTurn = 0;
  let longest = 0;
  let bytes = 0;
  const hooks: TerminalReaderHooks = {
    output: (chunk) => {
      bytes += chunk.length;
      calls++;
      // Calls before the next microtask are one synchronous turn of reading.
      if (inTurn++ === 0) queueMicrotask(() => inTurn = 0);
      longest = Math.max(longest, inTurn);
      const until = performance.now() + 5; // Output that costs 5 ms per buffer (a flood of sequences).
      while (performance.now() < until) { /* busy, as parsing is */ }
    },
    eof: () => {},
    blocked: () => false,
    wantsWrite: () => false,
    writable: () => {},
    fail: (error) => assert.fail(String(error)),
    released: () => {},
    later: (ms, fn) => void setTimeout(fn, ms),
  };
  const reader = new TerminalReader(pty.master, true, hooks);
  try {
    await until(() => calls >= 40, "40 buffers of output", 20_000);
    assert.ok(bytes > 40 * 4096, `${bytes} bytes read`);
    // 5 ms each: a turn of READ_TURN_MS (8) takes two; one bounded by bytes alone took up to 16.
    assert.ok(longest <= Math.ceil(READ_TURN_MS / 5) + 1, `${longest} buffers in one turn`);
    assert.ok(longest >= 1);
  } finally {
    writer.kill("SIGKILL");
    await writer.status;
    reader.stop();
    lib.sym.close(pty.slave);
    await until(() => reader.closable(), "the thread letting go");
    lib.sym.close(pty.master);
  }
});

Deno.test("terminal reader: giving up on a terminal someone else holds open ends the output", () => {
  const t = setup(false);
  try {
    t.write("last words");
    assert.equal(t.reader.giveUp(), false, "no thread to ask first");
    assert.equal(t.reader.eof, true);
    assert.equal(t.eofs(), 1);
    assert.equal(t.text(), "last words", "what was there is read before the end");
  } finally {
    t.closeSlave();
    t.closeMaster();
  }
});
