import assert from "node:assert/strict";
import { OutputHistory } from "./history.ts";

const SIZE = { cols: 80, rows: 24 };

function text(history: OutputHistory): string {
  return history.entries().map((e) => typeof e === "string" ? e : `<${e.cols}x${e.rows}>`).join("");
}

Deno.test("OutputHistory: keeps everything below its bound, in order", () => {
  const history = new OutputHistory(1000, SIZE);
  history.push("hello ");
  history.resize({ cols: 100, rows: 30 });
  history.push("world");
  assert.equal(text(history), "hello <100x30>world");
  assert.equal(history.dropped, false);
  assert.deepEqual(history.start, SIZE);
});

Deno.test("OutputHistory: keeps the last `capacity` units and says it dropped some", () => {
  const history = new OutputHistory(2000, SIZE);
  for (let i = 0; i < 100; i++) history.push(`${i}`.padStart(100, "."));
  assert.equal(history.units, 2000);
  assert.equal(history.dropped, true);
  const kept = text(history);
  assert.equal(kept.length, 2000);
  assert.ok(kept.endsWith(".99"));
  assert.ok(kept.startsWith(".".repeat(98) + "80"));
});

Deno.test("OutputHistory: one chunk larger than the bound keeps its tail", () => {
  const history = new OutputHistory(10, SIZE);
  history.push("0123456789abcdef");
  assert.equal(text(history), "6789abcdef");
});

Deno.test("OutputHistory: a dropped resize becomes the start size", () => {
  const history = new OutputHistory(100, SIZE);
  history.push("a".repeat(50));
  history.resize({ cols: 40, rows: 10 });
  history.push("b".repeat(90));
  assert.deepEqual(history.start, { cols: 40, rows: 10 });
  assert.equal(text(history), "b".repeat(90));
});

Deno.test("OutputHistory: never starts with half a surrogate pair", () => {
  const history = new OutputHistory(3, SIZE);
  history.push("ab😀cd"); // 6 units: keeping 3 would start with the emoji's second half.
  assert.equal(text(history), "cd");
});

Deno.test("OutputHistory: many keystroke echoes are joined into blocks", () => {
  const history = new OutputHistory(64 * 1024, SIZE);
  for (let i = 0; i < 10_000; i++) history.push("x");
  assert.ok(history.entries().length <= 10_000 / 64 + 1);
  assert.equal(text(history), "x".repeat(10_000));
});

Deno.test("OutputHistory: capacity 0 keeps nothing but remembers that output was lost", () => {
  const history = new OutputHistory(0, SIZE);
  history.resize({ cols: 10, rows: 5 });
  assert.equal(history.dropped, false);
  history.push("x");
  assert.equal(history.dropped, true);
  assert.deepEqual(history.entries(), []);
  assert.deepEqual(history.start, { cols: 10, rows: 5 });
});
