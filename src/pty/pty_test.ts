import assert from "node:assert/strict";
import { libc } from "./_libc.ts";
import { getWindowSize, openPty, setWindowSize } from "./pty.ts";

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
