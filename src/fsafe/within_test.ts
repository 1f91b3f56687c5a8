import assert from "node:assert/strict";
import { isWithin } from "./within.ts";

Deno.test("isWithin compares whole path segments", () => {
  const cases: [string, string, boolean][] = [
    ["/a", "/a", true],
    ["/a/b", "/a", true],
    ["/ab", "/a", false],
    ["/a", "/a/b", false],
    ["/", "/", true],
    ["/etc/passwd", "/", true],
    ["/a/b/c", "/a/b", true],
    ["/a/bc", "/a/b", false],
  ];
  for (const [path, root, want] of cases) assert.equal(isWithin(path, root), want, `${path} in ${root}`);
});
