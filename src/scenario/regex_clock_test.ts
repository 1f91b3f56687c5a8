import assert from "node:assert/strict";
import { MAX_ABANDONED, MAX_REGEX_INPUT, RegexClock, TIMED_OUT } from "./regex_clock.ts";

Deno.test({
  name: "RegexClock: answers like RegExp, and the clock wins over catastrophic backtracking",
  // A terminated worker may still be finishing its hopeless match when the test ends.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const clock = new RegexClock();
    try {
      assert.equal(await clock.test("^b", "m", "a\nbc", 5000), true);
      assert.equal(await clock.test("^b", "", "a\nbc", 5000), false);
      assert.equal(await clock.replace([{ pattern: "\\d+", replacement: "N" }], "a1b22", 5000), "aNbN");
      // 2^40 paths: would not finish for hours on the main thread, blocking every timer.
      const started = performance.now();
      const ticks: number[] = [];
      const ticker = setInterval(() => ticks.push(performance.now()), 50);
      const verdict = await clock.test("^(a+)+$", "", "a".repeat(40) + "!", 300);
      clearInterval(ticker);
      const elapsed = performance.now() - started;
      assert.equal(verdict, TIMED_OUT);
      assert.ok(elapsed >= 290 && elapsed < 1500, `answered after ${elapsed} ms`);
      assert.ok(ticks.length >= 3, "timers kept firing on the main thread");
      const bomb = await clock.replace([{ pattern: "(x+x+)+y", replacement: "" }], "x".repeat(40), 200);
      assert.equal(bomb, TIMED_OUT);
      // A fresh worker serves the next match.
      assert.equal(await clock.test("ok$", "", "it is ok", 5000), true);
      // Only the tail of a huge text is searched.
      const huge = "needle" + "x".repeat(MAX_REGEX_INPUT);
      assert.equal(await clock.test("needle", "", huge, 5000), false);
      assert.equal(await clock.test("x$", "", huge, 5000), true);
      // Runaway workers are capped: after MAX_ABANDONED of them, matches time out at once.
      assert.equal(MAX_ABANDONED, 3);
      assert.equal(await clock.test("^(a+)+$", "", "a".repeat(40) + "!", 100), TIMED_OUT);
      const quick = performance.now();
      assert.equal(await clock.test("ok$", "", "it is ok", 5000), TIMED_OUT);
      assert.ok(performance.now() - quick < 50);
    } finally {
      clock.close();
    }
  },
});
