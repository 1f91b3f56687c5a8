import assert from "node:assert/strict";
import {
  DRAIN_DEADLINE_MS,
  MAX_SWEEPS,
  SWEEP_INTERVAL_MS,
  WindDown,
  type WindDownHost,
} from "./wind_down.ts";

/** A host whose conditions the test sets, with timers run by hand. */
function fakeHost() {
  const state = {
    eof: false,
    initReaped: true,
    closable: true,
    lastKillAt: -Infinity,
    remaining: 0,
    blocked: false,
    snapshots: 0,
    giveUps: 0,
    kills: 0,
    finished: 0,
    timers: [] as { ms: number; fn: () => void }[],
  };
  const host: WindDownHost = {
    tree: {
      get initReaped() {
        return state.initReaped;
      },
      get lastKillAt() {
        return state.lastKillAt;
      },
      remaining: () => state.remaining,
    },
    reader: {
      get eof() {
        return state.eof;
      },
      closable: () => state.closable,
      giveUp: () => (state.giveUps++, true),
    },
    blocked: () => state.blocked,
    snapshotsPending: () => state.snapshots,
    kill: () => void state.kills++,
    later: (ms, fn) => void state.timers.push({ ms, fn }),
    finish: () => void state.finished++,
  };
  return { state, host };
}

Deno.test("WindDown: exit needs the leader reaped and EOF, in either order, and comes once", () => {
  const { state, host } = fakeHost();
  const windDown = new WindDown(host);
  state.eof = true;
  windDown.check();
  assert.equal(state.finished, 0); // Not reaped yet.
  windDown.leaderReaped();
  assert.equal(state.finished, 1);
  assert.equal(windDown.finished, true);
  windDown.check();
  assert.equal(state.finished, 1);
  assert.equal(state.timers.length, 0); // EOF came first: no drain deadline.
});

Deno.test("WindDown: waits for the sandbox's init, the reader thread and owed snapshots", () => {
  const { state, host } = fakeHost();
  const windDown = new WindDown(host);
  state.eof = true;
  state.initReaped = false;
  state.closable = false;
  state.snapshots = 1;
  windDown.leaderReaped();
  for (const key of ["snapshots", "initReaped", "closable"] as const) {
    assert.equal(state.finished, 0, key);
    if (key === "snapshots") state.snapshots = 0;
    else state[key] = true;
    windDown.check();
  }
  assert.equal(state.finished, 1);
});

Deno.test("WindDown: members still alive are killed and looked for again, at most MAX_SWEEPS times", () => {
  const { state, host } = fakeHost();
  const windDown = new WindDown(host);
  state.eof = true;
  state.remaining = 1; // A process that never goes away.
  windDown.leaderReaped();
  let sweeps = 0;
  while (state.timers.length > 0) {
    const timer = state.timers.shift()!;
    assert.equal(timer.ms, SWEEP_INTERVAL_MS);
    sweeps++;
    timer.fn();
  }
  assert.equal(sweeps, MAX_SWEEPS);
  assert.equal(state.kills, MAX_SWEEPS);
  assert.equal(state.finished, 1); // It gives up rather than hang.
});

Deno.test("WindDown: a kill a moment ago gets a sweep interval before the members are counted", () => {
  const { state, host } = fakeHost();
  const windDown = new WindDown(host);
  state.eof = true;
  state.lastKillAt = performance.now();
  windDown.leaderReaped();
  assert.equal(state.finished, 0);
  assert.equal(state.timers[0]!.ms, SWEEP_INTERVAL_MS);
  state.lastKillAt = -Infinity;
  state.timers.shift()!.fn();
  assert.equal(state.finished, 1);
});

Deno.test("WindDown: without EOF, the drain deadline gives up on the terminal; not while reading is paused", () => {
  const { state, host } = fakeHost();
  new WindDown(host).leaderReaped();
  assert.equal(state.timers.length, 1);
  assert.equal(state.timers[0]!.ms, DRAIN_DEADLINE_MS);
  state.blocked = true;
  state.timers.shift()!.fn();
  assert.equal(state.giveUps, 0); // Output still owed to a consumer: armed again.
  assert.equal(state.timers.length, 1);
  state.blocked = false;
  state.timers.shift()!.fn();
  assert.equal(state.giveUps, 1);
  assert.equal(state.timers.length, 1); // giveUp said to come back if its EOF does not follow.
  state.eof = true;
  state.timers.shift()!.fn();
  assert.equal(state.giveUps, 1);
  assert.equal(state.timers.length, 0);
});
