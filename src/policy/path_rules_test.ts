import assert from "node:assert/strict";
import { pathFault } from "./path_rules.ts";

Deno.test("absolute, normalized paths are fine", () => {
  for (const path of ["/", "/usr", "/home/me/project", "/a/.hidden", "/a/..b", "/a/b.c", "/with space"]) {
    assert.equal(pathFault(path), null, path);
  }
});

const BAD: readonly [string, string, RegExp][] = [
  ["", "E_POLICY_PATH_RELATIVE", /absolute/],
  ["bin", "E_POLICY_PATH_RELATIVE", /absolute/],
  ["./bin", "E_POLICY_PATH_RELATIVE", /absolute/],
  ["~/x", "E_POLICY_PATH_RELATIVE", /instead of "~"/],
  ["/a/../b", "E_POLICY_PATH_DOTDOT", /without "\.\." segments/],
  ["/..", "E_POLICY_PATH_DOTDOT", /"\.\."/],
  ["/a/./b", "E_POLICY_PATH_DOTDOT", /without "\." segments/],
  ["/a/.", "E_POLICY_PATH_DOTDOT", /"\."/],
  ["/a//b", "E_POLICY_PATH_DOTDOT", /without "\/\/"/],
  ["//a", "E_POLICY_PATH_DOTDOT", /"\/\/"/],
  ["/a/", "E_POLICY_PATH_DOTDOT", /trailing "\/"/],
  ["/a\0b", "E_POLICY_SCHEMA", /NUL/],
];

for (const [path, code, reason] of BAD) {
  Deno.test(`path ${JSON.stringify(path)} fails with ${code}`, () => {
    const fault = pathFault(path);
    assert.equal(fault?.code, code);
    assert.match(fault.reason, reason);
  });
}
