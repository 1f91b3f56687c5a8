import assert from "node:assert/strict";
import { TIMED_OUT, within } from "./clock.ts";

Deno.test("within: the value when it comes in time, TIMED_OUT when not, a rejection in time passed on", async () => {
  assert.equal(await within(Promise.resolve(7), 1000), 7);
  assert.equal(await within(new Promise(() => {}), 5), TIMED_OUT);
  await assert.rejects(within(Promise.reject(new Error("boom")), 1000), /boom/);
  // A rejection after the deadline is ignored (the race already handled it): no unhandled rejection.
  const late = new Promise((_, reject) => setTimeout(() => reject(new Error("late")), 20));
  assert.equal(await within(late, 1), TIMED_OUT);
  await new Promise((resolve) => setTimeout(resolve, 40));
});

Deno.test("within: its timer is cleared once the value came (the test's op sanitizer checks it)", async () => {
  assert.equal(await within(Promise.resolve("now"), 60_000), "now");
});
