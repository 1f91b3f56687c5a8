import assert from "node:assert/strict";
import { libc } from "./_libc.ts";
import { waitBlocked } from "./gate.ts";
import { spawnOnPty } from "./spawn.ts";

Deno.test("gate: a helper child that died during setup but is not reaped yet reads as failed at once, not at the deadline", () => {
  const child = spawnOnPty({ argv: ["/bin/true"], env: {}, cols: 80, rows: 24 });
  try {
    // Not reaped: a zombie, as bwrap's child is for a moment when its setup fails.
    const deadline = performance.now() + 5000;
    for (let i = 0; i < 200; i++) {
      const stat = Deno.readTextFileSync(`/proc/${child.pid}/stat`);
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) break;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
    const started = performance.now();
    assert.equal(waitBlocked(child.pid, 5, deadline), false);
    assert.ok(performance.now() - started < 1000, "decided without waiting for the deadline");
  } finally {
    const status = new Int32Array(1);
    libc().sym.waitpid(child.pid, new Uint8Array(status.buffer), 0);
    libc().sym.close(child.master);
  }
  // Reaped: gone.
  assert.equal(waitBlocked(child.pid, 5, performance.now() + 1000), false);
});
