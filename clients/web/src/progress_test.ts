import assert from "node:assert/strict";
import { progressText } from "./progress.ts";

Deno.test("progressText: a count before the total is known, then a share of it", () => {
  assert.equal(progressText({ received: 0, lastSeq: -1, until: null }), "Loading the log: 0 frames");
  assert.equal(progressText({ received: 1234, lastSeq: 1233, until: null }), "Loading the log: 1,234 frames");
  assert.equal(
    progressText({ received: 1234, lastSeq: 1233, until: 5000 }),
    "Loading the log: 1,234 of 5,000 frames (24%)",
  );
  // A log whose oldest frames were rotated away starts above seq 0: the share follows the seq.
  assert.equal(
    progressText({ received: 10, lastSeq: 4999, until: 5000 }),
    "Loading the log: 5,000 of 5,000 frames (100%)",
  );
  // Live frames after the history do not count past its end.
  assert.equal(progressText({ received: 4, lastSeq: 3, until: 3 }), "Loading the log: 3 of 3 frames (100%)");
  assert.equal(progressText({ received: 3, lastSeq: 2, until: 0 }), "Loading the log: 3 frames");
});
