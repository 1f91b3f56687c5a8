import assert from "node:assert/strict";
import { HIGH_WATERMARK, LOW_WATERMARK, Watermarks } from "./watermarks.ts";

Deno.test("Watermarks: pause above high, resume at low, once per crossing", () => {
  const changes: boolean[] = [];
  const marks = new Watermarks((paused) => changes.push(paused), 100, 20);
  marks.add(100);
  assert.equal(marks.paused, false); // At the mark is not above it.
  marks.add(1);
  assert.equal(marks.paused, true);
  marks.add(500);
  assert.deepEqual(changes, [true]);
  marks.done(580);
  assert.equal(marks.pending, 21);
  assert.equal(marks.paused, true); // Between the marks: still paused (hysteresis).
  marks.done(1);
  assert.equal(marks.paused, false);
  marks.done(50);
  assert.equal(marks.pending, 0); // Never negative.
  assert.deepEqual(changes, [true, false]);
});

Deno.test("Watermarks: defaults and argument checks", () => {
  const marks = new Watermarks(() => {});
  assert.equal(marks.high, HIGH_WATERMARK);
  assert.equal(marks.low, LOW_WATERMARK);
  assert.ok(HIGH_WATERMARK < 50_000_000); // xterm throws above 50 MB queued.
  assert.throws(() => new Watermarks(() => {}, 10, 10), RangeError);
  assert.throws(() => new Watermarks(() => {}, 10, -1), RangeError);
});
