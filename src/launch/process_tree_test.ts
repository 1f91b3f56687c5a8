import assert from "node:assert/strict";
import { decodeWaitStatus, libc, type SandboxInit, spawnOnPty } from "../pty/mod.ts";
import { ProcessTree, type ProcessTreeOptions } from "./process_tree.ts";

/** Ceilings with nothing in a cgroup. */
const NO_CGROUP = { kill: () => 0, remaining: () => 0 };

/** A stand-in for a sandbox's init: records signals, finds no process of its (made-up) pid namespace. */
function fakeInit(alive = true) {
  const signals: string[] = [];
  const init = {
    namespace: "pid:[4026531836-not-a-real-one]",
    handle: {
      pid: 2147480000,
      signal: (signal: string) => (signals.push(signal), alive),
      exists: () => alive,
      close: () => {},
    },
  } as unknown as SandboxInit;
  return { init, signals };
}

function tree(options: Partial<ProcessTreeOptions> & { pid: number }) {
  const timers: { ms: number; fn: () => void }[] = [];
  const processes = new ProcessTree({
    launcher: false,
    init: null,
    ceilings: NO_CGROUP,
    later: (ms, fn) => void timers.push({ ms, fn }),
    ...options,
  });
  return { processes, timers };
}

/** Reaps `pid` (blocking; it was just killed). */
function reap(pid: number) {
  const status = new Int32Array(1);
  libc().sym.waitpid(pid, new Uint8Array(status.buffer), 0);
  return decodeWaitStatus(status[0]!, libc().table);
}

Deno.test("process tree: without a sandbox a signal reaches the program itself, and exit statuses read as they are", () => {
  const child = spawnOnPty({ argv: ["/bin/sleep", "30"], env: {}, cols: 80, rows: 24 });
  try {
    const { processes } = tree({ pid: child.pid });
    assert.deepEqual(processes.signal("TERM"), { pid: child.pid, deliveredAs: "TERM" });
    const status = reap(child.pid);
    assert.deepEqual(processes.exitStatus(status), { code: null, signal: "TERM" });
    // No launcher: 128 + N is the program's own exit code.
    assert.deepEqual(processes.exitStatus({ kind: "exited", code: 143 }), { code: 143, signal: null });
    processes.leaderReaped(performance.now(), () => assert.fail("no init to wait for"));
    assert.equal(processes.initReaped, true);
    assert.equal(processes.remaining(), 0);
  } finally {
    libc().sym.close(child.master);
  }
});

Deno.test("process tree: kill SIGKILLs the terminal's session and counts the cgroup's processes", () => {
  const child = spawnOnPty({ argv: ["/bin/sleep", "30"], env: {}, cols: 80, rows: 24 });
  let cgroupKills = 0;
  try {
    const { processes } = tree({
      pid: child.pid,
      ceilings: { kill: () => (cgroupKills++, 0), remaining: () => 2 },
    });
    processes.kill();
    assert.equal(cgroupKills, 1);
    assert.ok(processes.lastKillAt > 0);
    assert.deepEqual(processes.exitStatus(reap(child.pid)), { code: null, signal: "KILL" });
    processes.leaderReaped(performance.now(), () => {});
    assert.equal(processes.remaining(), 2, "what is left in the cgroup is still counted");
  } finally {
    libc().sym.close(child.master);
  }
});

Deno.test("process tree: under a launcher, exit 128+N reads as signal N only when Specter sent N", () => {
  const { init } = fakeInit();
  const { processes } = tree({ pid: 2147480001, launcher: true, init });
  assert.deepEqual(processes.exitStatus({ kind: "exited", code: 143 }), { code: 143, signal: null });
  processes.terminate(); // HUP, TERM and CONT into the (empty) sandbox.
  assert.deepEqual(processes.exitStatus({ kind: "exited", code: 143 }), { code: null, signal: "TERM" });
  assert.deepEqual(processes.exitStatus({ kind: "exited", code: 137 }), { code: 137, signal: null });
  assert.deepEqual(processes.exitStatus({ kind: "exited", code: 3 }), { code: 3, signal: null });
});

Deno.test("process tree: under a launcher, kill goes to the sandbox's init, and the launcher only after a delay", () => {
  const { init, signals } = fakeInit();
  const { processes, timers } = tree({ pid: 2147480002, launcher: true, init });
  processes.kill();
  processes.kill(); // One launcher timer, however many kills.
  assert.deepEqual(signals, ["KILL", "KILL"]);
  assert.equal(timers.length, 1);
  assert.equal(timers[0]!.ms, 2000);
  assert.deepEqual(processes.exitStatus({ kind: "exited", code: 137 }), { code: null, signal: "KILL" });
  // The sandbox's program is gone: signals have nowhere to go.
  assert.equal(processes.signal("INT"), null);
});

Deno.test("process tree: exit waits for a sandbox's init after its launcher was reaped, at most INIT_REAP_MS", () => {
  const { init } = fakeInit(true);
  const { processes, timers } = tree({ pid: 2147480003, launcher: true, init });
  let done = 0;
  processes.leaderReaped(performance.now(), () => done++);
  assert.equal(processes.initReaped, false);
  const deadline = timers.find((t) => t.ms === 2000);
  assert.ok(deadline !== undefined);
  deadline.fn();
  assert.equal(processes.initReaped, true);
  assert.equal(done, 1);
  // An init already gone (its launcher reaped it) is not waited for.
  const gone = tree({ pid: 2147480004, launcher: true, init: fakeInit(false).init });
  gone.processes.leaderReaped(performance.now(), () => assert.fail("not waited for"));
  assert.equal(gone.processes.initReaped, true);
});
