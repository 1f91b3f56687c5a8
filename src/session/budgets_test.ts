import assert from "node:assert/strict";
import type { Breach } from "../ceilings/mod.ts";
import type { Frame, FrameBody } from "../protocol/mod.ts";
import {
  type BudgetHost,
  type BudgetLimits,
  Budgets,
  LIMIT_SAMPLE_MS,
  reportedBefore,
  type TreeCeilings,
} from "./budgets.ts";

const NONE: BudgetLimits = { timeoutMs: null, maxOutputBytes: null, cpuSeconds: null };

/** A host that records what the budgets ask for, with timers it runs by hand. */
function fakeHost(): BudgetHost & {
  frames: FrameBody[];
  calls: string[];
  timers: { ms: number; fn: () => void }[];
  isReaped: boolean;
} {
  const host = {
    frames: [] as FrameBody[],
    calls: [] as string[],
    timers: [] as { ms: number; fn: () => void }[],
    isReaped: false,
    pid: 4242,
    emit: (body: FrameBody) => void host.frames.push(body),
    later: (ms: number, fn: () => void) => void host.timers.push({ ms, fn }),
    kill: () => void host.calls.push("kill"),
    terminate: () => void host.calls.push("terminate"),
    reaped: () => host.isReaped,
  };
  return host;
}

function ceilings(results: (Breach | null)[]): TreeCeilings & { pids: number[] } {
  const pids: number[] = [];
  return { watched: true, pids, check: (pid) => (pids.push(pid), results.shift() ?? null) };
}
const UNWATCHED: TreeCeilings = { watched: false, check: () => assert.fail("not watched") };

Deno.test("Budgets: the wall clock terminates a running program once, with capsule_kill wall", () => {
  const host = fakeHost();
  const budgets = new Budgets({ ...NONE, timeoutMs: 500 }, UNWATCHED, host, performance.now());
  assert.equal(host.timers.length, 1);
  assert.equal(host.timers[0]!.ms, 500);
  host.timers[0]!.fn();
  assert.equal(budgets.timedOut, true);
  assert.equal(budgets.breached, "wall");
  assert.deepEqual(host.calls, ["terminate"]);
  const frame = host.frames[0] as { type: string; reason: string; limit: number };
  assert.equal(frame.type, "capsule_kill");
  assert.equal(frame.reason, "wall");
  assert.equal(frame.limit, 500);
});

Deno.test("Budgets: a program started earlier (taken over by a new host) gets what is left of its clock", () => {
  const host = fakeHost();
  new Budgets({ ...NONE, timeoutMs: 5000 }, UNWATCHED, host, performance.now() - 3000);
  assert.ok(host.timers[0]!.ms > 1900 && host.timers[0]!.ms <= 2000, `${host.timers[0]!.ms}`);
  const late = fakeHost();
  new Budgets({ ...NONE, timeoutMs: 5000 }, UNWATCHED, late, performance.now() - 9000);
  assert.equal(late.timers[0]!.ms, 0);
});

Deno.test("Budgets: output a previous host counted counts against the budget", () => {
  const host = fakeHost();
  const budgets = new Budgets({ ...NONE, maxOutputBytes: 100, outputBefore: 90 }, UNWATCHED, host, 0);
  assert.equal(budgets.outputBytes, 90);
  assert.equal(budgets.admit(new Uint8Array(20)).length, 10);
  assert.equal(budgets.outputBytes, 100);
});

Deno.test("Budgets: the wall clock does nothing for a program already reaped", () => {
  const host = fakeHost();
  const budgets = new Budgets({ ...NONE, timeoutMs: 500 }, UNWATCHED, host, performance.now());
  host.isReaped = true;
  host.timers[0]!.fn();
  assert.equal(budgets.timedOut, false);
  assert.deepEqual(host.frames, []);
  assert.deepEqual(host.calls, []);
});

Deno.test("Budgets: output is admitted up to the budget, then overflow, capsule_kill and a kill", () => {
  const host = fakeHost();
  const budgets = new Budgets({ ...NONE, maxOutputBytes: 10 }, UNWATCHED, host, performance.now());
  assert.equal(budgets.admit(new Uint8Array(6)).length, 6);
  assert.equal(budgets.admit(new Uint8Array(6)).length, 4);
  assert.equal(budgets.admit(new Uint8Array(6)).length, 0);
  assert.equal(budgets.outputBytes, 10);
  budgets.outputExceeded();
  budgets.outputExceeded(); // Once only.
  assert.equal(budgets.truncated, true);
  assert.deepEqual(host.frames, [
    { type: "overflow", reason: "max_output", limit: 10 },
    { type: "capsule_kill", reason: "output", limit: 10, value: 10 },
  ]);
  assert.deepEqual(host.calls, ["kill"]);
});

Deno.test("Budgets: without an output budget every byte is admitted", () => {
  const budgets = new Budgets(NONE, UNWATCHED, fakeHost(), performance.now());
  assert.equal(budgets.admit(new Uint8Array(1 << 20)).length, 1 << 20);
  assert.equal(budgets.truncated, false);
});

Deno.test("Budgets: the sampler measures every LIMIT_SAMPLE_MS until a breach, which it reports once", () => {
  const host = fakeHost();
  const tree = ceilings([null, { reason: "memory", limit: 100, value: 150, enforcedBy: "pidns-sampler" }]);
  const budgets = new Budgets(NONE, tree, host, performance.now());
  host.timers.shift()!.fn(); // First sample: no breach, the next is scheduled.
  assert.equal(host.timers[0]!.ms, LIMIT_SAMPLE_MS);
  host.timers.shift()!.fn(); // Second: the breach.
  assert.equal(host.timers.length, 0);
  assert.deepEqual(tree.pids, [4242, 4242]);
  assert.equal(budgets.breached, "memory");
  assert.deepEqual(host.frames, [{
    type: "capsule_kill",
    reason: "memory",
    limit: 100,
    value: 150,
    enforced_by: "pidns-sampler",
  }]);
  assert.deepEqual(host.calls, ["kill"]);
});

Deno.test("Budgets: the sampler stops once the leader is reaped", () => {
  const host = fakeHost();
  const tree = ceilings([]);
  new Budgets(NONE, tree, host, performance.now());
  host.isReaped = true;
  host.timers.shift()!.fn();
  assert.deepEqual(tree.pids, []);
  assert.equal(host.timers.length, 0);
});

Deno.test("Budgets: SIGXCPU from RLIMIT_CPU is a cpu breach enforced by the rlimit", () => {
  const host = fakeHost();
  const budgets = new Budgets({ ...NONE, cpuSeconds: 2 }, UNWATCHED, host, performance.now());
  budgets.leaderExited("XCPU");
  assert.equal(budgets.breached, "cpu");
  assert.deepEqual(host.frames, [{
    type: "capsule_kill",
    reason: "cpu",
    limit: 2,
    value: 2,
    enforced_by: "rlimit",
  }]);
});

Deno.test("Budgets: a breach between the last sample and the exit still counts; the first breach wins", () => {
  const host = fakeHost();
  const tree = ceilings([{ reason: "processes", limit: 4, value: 9, enforcedBy: "session-sampler" }]);
  const budgets = new Budgets({ ...NONE, timeoutMs: 1000 }, tree, host, performance.now());
  budgets.leaderExited(null);
  assert.equal(budgets.breached, "processes");
  host.isReaped = false;
  host.timers[0]!.fn(); // The wall clock after the breach: timed out, but capsule_kill stays the first.
  assert.equal(host.frames.filter((f) => f.type === "capsule_kill").length, 1);
});

Deno.test("Budgets: a breach a previous host reported stays reported; the program it ended is not reported again", () => {
  // The host died after the wall clock's capsule_kill, and the program exited before the new host came.
  const host = fakeHost();
  const before = { breached: "wall", truncated: false } as const;
  const budgets = new Budgets({ ...NONE, timeoutMs: 500, before }, UNWATCHED, host, performance.now() - 900);
  assert.equal(budgets.timedOut, true);
  assert.equal(budgets.breached, "wall");
  host.isReaped = true;
  host.timers[0]!.fn();
  assert.deepEqual(host.frames, []);
  assert.deepEqual(host.calls, []);
});

Deno.test("Budgets: a wall breach reported before is carried out again (terminate) when the program still runs", () => {
  const host = fakeHost();
  const before = { breached: "wall", truncated: false } as const;
  new Budgets({ ...NONE, timeoutMs: 500, before }, UNWATCHED, host, performance.now() - 900);
  assert.equal(host.timers[0]!.ms, 0);
  host.timers[0]!.fn();
  assert.deepEqual(host.calls, ["terminate"]);
  assert.deepEqual(host.frames, [], "capsule_kill is not sent twice");
});

Deno.test("Budgets: an output or ceiling breach reported before kills a program still running, and says truncated", () => {
  const host = fakeHost();
  const before = { breached: "output", truncated: true } as const;
  const budgets = new Budgets(
    { ...NONE, maxOutputBytes: 100, outputBefore: 100, before },
    UNWATCHED,
    host,
    0,
  );
  assert.equal(budgets.truncated, true);
  assert.equal(budgets.timedOut, false);
  host.timers[0]!.fn();
  assert.deepEqual(host.calls, ["kill"]);
  budgets.outputExceeded();
  assert.deepEqual(host.frames, [], "overflow and capsule_kill are not sent twice");
  const gone = fakeHost();
  new Budgets({ ...NONE, before: { breached: "memory", truncated: false } }, UNWATCHED, gone, 0);
  gone.isReaped = true;
  gone.timers[0]!.fn();
  assert.deepEqual(gone.calls, []);
});

Deno.test("reportedBefore: the first capsule_kill's reason and whether the output was cut", () => {
  const frames = [
    { seq: 1, ts: 0, type: "stdout", data: "x" },
    { seq: 2, ts: 0, type: "overflow", reason: "lagged", missed_from: 0, missed_to: 1 },
    { seq: 3, ts: 0, type: "capsule_kill", reason: "wall", limit: 5000, value: 5001 },
    { seq: 4, ts: 0, type: "capsule_kill", reason: "memory", limit: 1, value: 2 },
  ] as Frame[];
  assert.deepEqual(reportedBefore(frames), { breached: "wall", truncated: false });
  const cut = [{ seq: 1, ts: 0, type: "overflow", reason: "max_output", limit: 10 }] as Frame[];
  assert.deepEqual(reportedBefore(cut), { breached: null, truncated: true });
  assert.deepEqual(reportedBefore([]), { breached: null, truncated: false });
});
