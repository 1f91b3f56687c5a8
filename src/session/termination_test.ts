import assert from "node:assert/strict";
import { Termination } from "./termination.ts";
import type { SignalName } from "../protocol/mod.ts";

function fakeTree() {
  const state = { calls: [] as string[], timers: [] as { ms: number; fn: () => void }[], gone: false };
  const termination = new Termination({
    tree: {
      signal: (signal: SignalName) => {
        state.calls.push(signal);
        return state.gone ? null : { pid: 42, deliveredAs: signal };
      },
      terminate: () => void state.calls.push("terminate"),
      kill: () => void state.calls.push("kill"),
    },
    later: (ms, fn) => void state.timers.push({ ms, fn }),
  });
  return { state, termination };
}

Deno.test("Termination: nobody asked to end: no stop kind, kills do not make one", () => {
  const { state, termination } = fakeTree();
  termination.kill();
  assert.equal(termination.stop, undefined);
  assert.deepEqual(state.calls, ["kill"]);
});

Deno.test("Termination: terminate once, SIGKILL after the grace; the program ending first is graceful", () => {
  const { state, termination } = fakeTree();
  assert.equal(termination.terminate(500), true);
  assert.equal(termination.terminate(800), true);
  assert.deepEqual(state.calls, ["terminate"]); // The tree's terminate runs once.
  assert.deepEqual(state.timers.map((t) => t.ms), [500, 800]); // Each call schedules its own SIGKILL.
  termination.leaderReaped();
  state.timers[0]!.fn(); // A SIGKILL after the leader was reaped (the rest of the session).
  assert.equal(termination.stop, "graceful");
});

Deno.test("Termination: SIGKILL before the program ended makes the stop killed", () => {
  const { state, termination } = fakeTree();
  termination.terminate(500);
  state.timers[0]!.fn();
  assert.deepEqual(state.calls, ["terminate", "kill"]);
  assert.equal(termination.stop, "killed");
});

Deno.test("Termination: a grace of 0 kills at once", () => {
  const { state, termination } = fakeTree();
  termination.terminate(0);
  assert.deepEqual(state.calls, ["terminate", "kill"]);
  assert.equal(state.timers.length, 0);
  assert.equal(termination.stop, "killed");
});

Deno.test("Termination: once the leader is reaped nothing is signalled (its pid may be reused)", () => {
  const { state, termination } = fakeTree();
  assert.deepEqual(termination.signal("INT"), { pid: 42, deliveredAs: "INT" });
  termination.leaderReaped();
  assert.equal(termination.reaped, true);
  assert.equal(termination.signal("INT"), null);
  assert.equal(termination.terminate(100), false);
  assert.deepEqual(state.calls, ["INT"]);
  assert.equal(termination.stop, undefined);
});

Deno.test("Termination: a signal the tree cannot deliver is null", () => {
  const { state, termination } = fakeTree();
  state.gone = true;
  assert.equal(termination.signal("TERM"), null);
});
