import assert from "node:assert/strict";
import { innermostPid, pidNamespaceOf, ProcessHandle } from "./sandbox_processes.ts";

Deno.test("a pidfd signals its process, and nothing once that process is reaped", async () => {
  const child = new Deno.Command("sleep", { args: ["30"] }).spawn();
  const handle = ProcessHandle.open(child.pid);
  assert.ok(handle !== null, "pidfd_open works on this host");
  try {
    assert.equal(handle.exists(), true);
    assert.equal(handle.signal("TERM"), true);
    assert.equal((await child.status).signal, "SIGTERM");
    assert.equal(handle.exists(), false, "reaped: gone for good, whoever gets its pid");
    assert.equal(handle.signal("KILL"), false, "a reaped process cannot be signalled through its pidfd");
  } finally {
    handle.close();
  }
  assert.equal(handle.signal("KILL"), false, "a closed handle signals nothing");
});

Deno.test("no handle for a process that does not exist", () => {
  assert.equal(ProcessHandle.open(0), null);
  assert.equal(ProcessHandle.open(-1), null);
  assert.equal(ProcessHandle.open(2 ** 31 - 1), null);
});

Deno.test("a process outside any nested pid namespace is its own innermost pid", () => {
  assert.equal(innermostPid(Deno.pid), Deno.pid);
  assert.match(pidNamespaceOf(Deno.pid) ?? "", /^pid:\[\d+\]$/);
  assert.equal(pidNamespaceOf(2 ** 31 - 1), null);
});
