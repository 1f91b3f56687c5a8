import assert from "node:assert/strict";
import { Timers } from "./timers.ts";

Deno.test("Timers: a timer that fired is no longer pending; clear cancels one", async () => {
  const timers = new Timers();
  const fired: string[] = [];
  timers.later(1, () => fired.push("a"));
  const b = timers.later(1, () => fired.push("b"));
  timers.clear(b);
  assert.equal(timers.size, 1);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(fired, ["a"]);
  assert.equal(timers.size, 0);
});

Deno.test("Timers: clearAll cancels timeouts and intervals", async () => {
  const timers = new Timers();
  let ticks = 0;
  timers.every(1, () => ticks++);
  timers.later(1, () => ticks += 100);
  timers.clearAll();
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(ticks, 0);
  assert.equal(timers.size, 0);
});

Deno.test("Timers: a delay a host timer cannot wait (over 2^31 - 1 ms) never fires early", async () => {
  const timers = new Timers();
  let fired = 0;
  for (const ms of [2 ** 31, 2 ** 32 + 3000, 1e300, Infinity]) timers.later(ms, () => fired++);
  timers.every(2 ** 31, () => fired++);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(fired, 0);
  assert.equal(timers.size, 5);
  timers.clearAll();
});
