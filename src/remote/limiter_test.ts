import assert from "node:assert/strict";
import {
  FailureLimiter,
  FIRST_LOCK_MS,
  FREE_FAILURES,
  MAX_LOCK_MS,
  MAX_PEERS,
  WINDOW_MS,
} from "./limiter.ts";

function clock() {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => now += ms };
}

Deno.test("FailureLimiter: free failures, then a lockout that doubles up to the cap", () => {
  const c = clock();
  const limiter = new FailureLimiter(c.now);
  for (let i = 0; i < FREE_FAILURES; i++) assert.equal(limiter.fail("10.0.0.1"), 0);
  assert.equal(limiter.fail("10.0.0.1"), FIRST_LOCK_MS);
  assert.equal(limiter.fail("10.0.0.1"), 2 * FIRST_LOCK_MS);
  for (let i = 0; i < 30; i++) limiter.fail("10.0.0.1");
  assert.equal(limiter.lockedFor("10.0.0.1"), MAX_LOCK_MS);
  assert.equal(limiter.lockedFor("10.0.0.2"), 0, "other peers are not affected");
  c.advance(MAX_LOCK_MS);
  assert.equal(limiter.lockedFor("10.0.0.1"), 0);
});

Deno.test("FailureLimiter: failures are forgotten after the window and after a success", () => {
  const c = clock();
  const limiter = new FailureLimiter(c.now);
  for (let i = 0; i < FREE_FAILURES; i++) limiter.fail("a");
  c.advance(WINDOW_MS + 1);
  assert.equal(limiter.fail("a"), 0, "a new window");
  for (let i = 0; i < FREE_FAILURES - 1; i++) limiter.fail("a");
  limiter.succeed("a");
  assert.equal(limiter.fail("a"), 0);
});

Deno.test("FailureLimiter: at most MAX_PEERS peers are remembered", () => {
  const limiter = new FailureLimiter(clock().now);
  for (let i = 0; i < MAX_PEERS + 500; i++) limiter.fail(`peer-${i}`);
  assert.equal(limiter.size, MAX_PEERS);
});
