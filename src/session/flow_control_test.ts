import assert from "node:assert/strict";
import type { FrameBody } from "../protocol/mod.ts";
import { FlowControl, type FlowHost } from "./flow_control.ts";
import type { Timer } from "./timers.ts";

function fakeHost() {
  const state = {
    lag: 0,
    input: 0,
    ended: false,
    wakes: 0,
    kills: 0,
    frames: [] as FrameBody[],
    timers: new Map<Timer, { ms: number; fn: () => void }>(),
  };
  let next = 0;
  const host: FlowHost = {
    emit: (body) => void state.frames.push(body),
    later: (ms, fn) => {
      const timer = ++next as unknown as Timer;
      state.timers.set(timer, { ms, fn });
      return timer;
    },
    clear: (timer) => void (timer !== undefined && state.timers.delete(timer)),
    kill: () => void state.kills++,
    wake: () => void state.wakes++,
    lagBytes: () => state.lag,
    inputPending: () => state.input,
    ended: () => state.ended,
  };
  return { state, host };
}
const OPTIONS = { bufferBytes: 1000, overflowTimeoutMs: 5000 };

Deno.test("FlowControl: a subscriber over bufferBytes behind pauses reading; half of it resumes", () => {
  const { state, host } = fakeHost();
  const flow = new FlowControl(OPTIONS, host);
  state.lag = 1000;
  flow.appended();
  assert.equal(flow.blocked, false);
  state.lag = 1001;
  flow.appended();
  assert.equal(flow.blocked, true);
  assert.equal(state.timers.size, 1); // The overflow timer.
  state.lag = 600;
  flow.drained();
  assert.equal(flow.blocked, true);
  state.lag = 500;
  flow.drained();
  assert.equal(flow.blocked, false);
  assert.equal(state.wakes, 1);
  assert.equal(state.timers.size, 0);
});

Deno.test("FlowControl: a subscriber behind for overflowTimeoutMs: overflow, discard, kill", () => {
  const { state, host } = fakeHost();
  const flow = new FlowControl(OPTIONS, host);
  state.lag = 5000;
  flow.appended();
  const [timer] = [...state.timers.values()];
  assert.equal(timer!.ms, 5000);
  timer!.fn();
  assert.deepEqual(state.frames, [{ type: "overflow", reason: "buffer", limit: 1000 }]);
  assert.equal(flow.discarding, true);
  assert.equal(flow.blocked, false); // Reading goes on so the terminal drains; output is dropped.
  assert.equal(state.kills, 1);
  flow.appended();
  assert.equal(flow.blocked, false); // Never pauses again once discarding.
});

Deno.test("FlowControl: the terminal model's backlog pauses reading until it caught up", () => {
  const { state, host } = fakeHost();
  const flow = new FlowControl(OPTIONS, host);
  flow.backlog(true);
  assert.equal(flow.blocked, true);
  flow.backlog(false);
  assert.equal(flow.blocked, false);
  assert.equal(state.wakes, 1);
});

Deno.test("FlowControl: inputRoom waits for pending input and for the subscriber, or for the end", async () => {
  const { state, host } = fakeHost();
  const flow = new FlowControl(OPTIONS, host);
  await flow.inputRoom(0); // Room at once.
  state.input = 10;
  let resolved = 0;
  void flow.inputRoom(5).then(() => resolved++);
  void flow.inputRoom(20).then(() => resolved++); // Room already: resolves without a wake.
  await Promise.resolve();
  assert.equal(resolved, 1);
  state.input = 0;
  state.lag = 2000;
  flow.wakeRoomWaiters();
  await Promise.resolve();
  assert.equal(resolved, 1); // The subscriber is behind.
  state.ended = true;
  flow.wakeRoomWaiters();
  await Promise.resolve();
  assert.equal(resolved, 2);
});
