import assert from "node:assert/strict";
import { unifiedDiff } from "./diff.ts";
import { normalizeText } from "../policy/mod.ts";

Deno.test("equal texts have no diff; a changed line gives one hunk with context", () => {
  assert.equal(unifiedDiff("a\nb\nc", "a\nb\nc"), "");
  const diff = unifiedDiff("1\n2\n3\n4\n5\n6\n7\n8\n9", "1\n2\n3\n4\nFIVE\n6\n7\n8\n9");
  assert.equal(diff, "--- expected\n+++ actual\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n");
});

Deno.test("additions and removals at the ends", () => {
  assert.match(unifiedDiff("a\nb", "a\nb\nc"), /\n\+c\n$/);
  assert.match(unifiedDiff("x\na", "a"), /\n-x\n/);
});

Deno.test("normalization replaces what differs between honest runs, and only when enabled", () => {
  const text =
    "at 2026-11-21T20:47:35.459Z pid 4242 took 12.5ms in /tmp/specter-abc id 0c25e29b-5498-497d-91de-0069d546b2cd 10:11:12";
  assert.equal(
    normalizeText(text),
    "at <timestamp> pid <pid> took <duration> in /tmp/<tmp> id <id> <time>",
  );
  assert.equal(normalizeText(text, []), text);
  assert.equal(
    normalizeText("secret=abc", [], [{ pattern: "secret=\\w+", replacement: "secret=<x>" }]),
    "secret=<x>",
  );
});
