import assert from "node:assert/strict";
import { ancestorsOf, assertProfilePath, MAX_PATH_BYTES, pathDepth, profilePathProblem } from "./paths.ts";

Deno.test("absolute, normalized, NUL-free, well-formed paths within PATH_MAX are accepted", () => {
  for (
    const path of [
      "/",
      "/a",
      "/Users/me/project",
      '/a"b/c)d;e\\f',
      "/caf\u00e9/\u{1f600}",
      `/${"x".repeat(MAX_PATH_BYTES - 1)}`,
    ]
  ) {
    assert.equal(profilePathProblem(path), null, path);
  }
});

const BAD: readonly [string, string][] = [
  ["", "not absolute"],
  ["relative/path", "not absolute"],
  ["/a\0b", "NUL"],
  ["/a\ud800b", "not valid Unicode"],
  ["/a\udc00", "not valid Unicode"],
  [`/${"x".repeat(MAX_PATH_BYTES)}`, "bytes long"],
  [`/${"\u00e9".repeat(512)}`, "bytes long"],
  ["/a/", "not normalized"],
  ["//a", "not normalized"],
  ["/a//b", "not normalized"],
  ["/a/./b", "not normalized"],
  ["/a/../b", "not normalized"],
  ["/..", "not normalized"],
];

for (const [path, problem] of BAD) {
  Deno.test(`refuses ${JSON.stringify(path.slice(0, 40))}: ${problem}`, () => {
    assert.ok(profilePathProblem(path)?.includes(problem), String(profilePathProblem(path)));
    assert.throws(() => assertProfilePath(path, "fs.write[0]"), (error: unknown) => {
      const e = error as { code: string; message: string; details: Record<string, unknown> };
      assert.equal(e.code, "E_SANDBOX_START");
      assert.equal(e.details.field, "fs.write[0]");
      assert.ok(!e.message.includes("\n") && !e.message.includes("\0"), "the message stays one safe line");
      return true;
    });
  });
}

Deno.test("ancestors: every proper ancestor, shallowest first", () => {
  assert.deepEqual(ancestorsOf("/"), []);
  assert.deepEqual(ancestorsOf("/a"), ["/"]);
  assert.deepEqual(ancestorsOf("/a/b c/d"), ["/", "/a", "/a/b c"]);
});

Deno.test("depth counts segments like bubblewrap's bind order", () => {
  assert.deepEqual(["/", "/a", "/a/b"].map(pathDepth), [2, 2, 3]);
});
