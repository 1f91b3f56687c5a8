import assert from "node:assert/strict";
import { deepFreeze } from "./freeze.ts";

Deno.test("deepFreeze freezes nested objects and arrays, also below a frozen object", () => {
  const inner = { list: [{ x: 1 }] };
  const value = deepFreeze({ a: Object.freeze({ inner }), b: [[1]], n: 1, s: "x" });
  assert.ok(Object.isFrozen(value));
  assert.ok(Object.isFrozen(value.a.inner));
  assert.ok(Object.isFrozen(value.a.inner.list[0]));
  assert.ok(Object.isFrozen(value.b[0]));
});

Deno.test("deepFreeze handles cycles and primitives", () => {
  const cyclic: { self?: unknown } = {};
  cyclic.self = cyclic;
  assert.equal(deepFreeze(cyclic), cyclic);
  assert.ok(Object.isFrozen(cyclic));
  assert.equal(deepFreeze(3), 3);
  assert.equal(deepFreeze(null), null);
});
