import assert from "node:assert/strict";
import type { PolicyProblem } from "../errors.ts";
import { documentPosition, inDocumentOrder } from "./document_order.ts";
import type { FieldPath } from "./field_path.ts";

const problem = (field: string): PolicyProblem => ({ code: "E_POLICY_SCHEMA", field, message: field });

Deno.test("positions follow the order keys appear in, missing keys first", () => {
  const doc = { network: "on", fs: { write: ["/a", "/b"] }, version: 1 };
  assert.deepEqual(documentPosition(doc, ["fs", "write", 1]), [1, 0, 1]);
  assert.deepEqual(documentPosition(doc, ["version"]), [2]);
  assert.deepEqual(documentPosition(doc, ["exec"]), [-1]);
  assert.deepEqual(documentPosition(doc, []), []);
});

Deno.test("problems are sorted by document position; a field precedes its entries; ties keep their order", () => {
  const doc = { network: "on", fs: { write: ["/a", "/b"] } };
  const at = (path: FieldPath, field: string) => ({ path, problem: problem(field) });
  const sorted = inDocumentOrder(doc, [
    at(["fs", "write", 1], "w1"),
    at(["fs", "write"], "w"),
    at(["network"], "n"),
    at([], "cwd"),
    at(["version"], "version"),
    at(["fs", "write", 0], "w0"),
    at(["fs", "write", 0], "w0-again"),
  ]);
  assert.deepEqual(sorted.map((p) => p.field), ["cwd", "version", "n", "w", "w0", "w0-again", "w1"]);
});
