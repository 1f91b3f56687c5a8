import assert from "node:assert/strict";
import { libc } from "./_libc.ts";
import { getWindowSize, openPty, setWindowSize, signalKeys, unixSocketPair } from "./pty.ts";

Deno.test("a new terminal has the requested size, and resizing changes it (real openpty/ioctl)", () => {
  const pty = openPty(100, 30);
  try {
    assert.match(pty.path, /^\/dev\/pts\/\d+$/);
    assert.deepEqual(getWindowSize(pty.master), { cols: 100, rows: 30 });
    assert.ok(setWindowSize(pty.master, 132, 43));
    assert.deepEqual(getWindowSize(pty.slave), { cols: 132, rows: 43 }, "the slave side sees the new size");
    const { table } = libc();
    const flags = libc().fcntl(pty.master, table.fcntl.F_GETFL, 0);
    assert.ok((flags & table.o.NONBLOCK) !== 0, "the master is non-blocking");
    const fdFlags = libc().fcntl(pty.master, table.fcntl.F_GETFD, 0);
    assert.ok((fdFlags & table.fcntl.FD_CLOEXEC) !== 0, "the master is close-on-exec");
  } finally {
    libc().sym.close(pty.master);
    libc().sym.close(pty.slave);
  }
});

Deno.test("signalKeys reads the slave's interrupt and quit keys through the master, none in raw mode", async () => {
  const pty = openPty(80, 24);
  const stty = async (...args: string[]) => {
    const { success } = await new Deno.Command("stty", { args: ["-F", pty.path, ...args] }).output();
    assert.ok(success, `stty ${args.join(" ")}`);
  };
  try {
    // A new terminal's defaults: ctrl-c and ctrl-\\.
    assert.deepEqual(signalKeys(pty.master), { intr: 0x03, quit: 0x1c });
    await stty("intr", "^A", "quit", "undef");
    assert.deepEqual(signalKeys(pty.master), { intr: 0x01, quit: null });
    await stty("raw");
    assert.deepEqual(signalKeys(pty.master), { intr: null, quit: null }, "raw mode raises no signals");
    await stty("isig");
    assert.deepEqual(signalKeys(pty.master), { intr: 0x01, quit: null });
    const [a, b] = unixSocketPair("stream", "E_SPAWN");
    try {
      assert.equal(signalKeys(a), null, "not a terminal");
    } finally {
      libc().sym.close(a);
      libc().sym.close(b);
    }
  } finally {
    libc().sym.close(pty.master);
    libc().sym.close(pty.slave);
  }
});
