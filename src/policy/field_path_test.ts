import assert from "node:assert/strict";
import { formatField, valueAt } from "./field_path.ts";

Deno.test("field paths print as dotted keys and indices", () => {
  assert.equal(formatField([]), "(policy)");
  assert.equal(formatField(["exec", 0]), "exec[0]");
  assert.equal(formatField(["fs", "write", 12]), "fs.write[12]");
  assert.equal(formatField(["budgets", "wall_ms"]), "budgets.wall_ms");
  assert.equal(formatField(["fs", "a.b"]), 'fs["a.b"]');
  assert.equal(formatField(["with space"]), '["with space"]');
});

Deno.test("valueAt follows keys and indices and stops at anything else", () => {
  const doc = { fs: { write: ["/a", "/b"] }, n: 1 };
  assert.equal(valueAt(doc, ["fs", "write", 1]), "/b");
  assert.deepEqual(valueAt(doc, []), doc);
  assert.equal(valueAt(doc, ["fs", "read", 0]), undefined);
  assert.equal(valueAt(doc, ["n", "x"]), undefined);
  assert.equal(valueAt(null, ["x"]), undefined);
});
