import assert from "node:assert/strict";
import { BINARY_DIRS, FORBIDDEN_TREES, pathSafetyReason, SYSTEM_TREES } from "./path_safety.ts";

for (const tree of FORBIDDEN_TREES) {
  Deno.test(`"${tree}" and everything under it is refused for every use`, () => {
    for (const use of ["exec", "read", "write"] as const) {
      assert.match(pathSafetyReason(tree, use, "/home/me") ?? "", /may never grant/, use);
      assert.match(pathSafetyReason(`${tree}/x/y`, use, "/home/me") ?? "", /may never grant/, use);
    }
  });
}

for (const tree of SYSTEM_TREES) {
  Deno.test(`"${tree}" subtrees are never writable`, () => {
    assert.match(pathSafetyReason(`${tree}/sub`, "write", "/home/me") ?? "", /never writable/);
  });
}

for (const dir of BINARY_DIRS) {
  Deno.test(`"${dir}" is fine for exec though it is a broad root`, () => {
    assert.equal(pathSafetyReason(dir, "exec", "/home/me"), null);
    assert.notEqual(pathSafetyReason(dir, "read", "/home/me"), null);
  });
}

Deno.test("ordinary project paths are fine for every use", () => {
  for (const use of ["exec", "read", "write"] as const) {
    assert.equal(pathSafetyReason("/home/me/project", use, "/home/me"), null, use);
    assert.equal(pathSafetyReason("/srv/data/out", use, "/home/me"), null, use);
  }
  assert.equal(pathSafetyReason("/usr/share/doc", "read", "/home/me"), null);
  assert.equal(pathSafetyReason("/usr/bin", "exec", "/home/me"), null);
});

Deno.test("lookalikes of forbidden trees are not confused with them", () => {
  assert.equal(pathSafetyReason("/procedures", "read", "/home/me"), null);
  assert.equal(pathSafetyReason("/devices/x", "write", "/home/me"), null);
});
