import assert from "node:assert/strict";
import { closest, didYouMean, editDistance } from "./suggest.ts";

Deno.test("editDistance counts insertions, deletions, substitutions and swaps", () => {
  assert.equal(editDistance("timout", "timeout"), 1);
  assert.equal(editDistance("atach", "attach"), 1);
  assert.equal(editDistance("basc", "basic"), 1);
  assert.equal(editDistance("sl", "ls"), 1);
  assert.equal(editDistance("", "abc"), 3);
  assert.equal(editDistance("kitten", "sitting"), 3);
});

Deno.test("closest suggests near names only", () => {
  assert.equal(closest("timout", ["timeout", "idle", "title"]), "timeout");
  assert.equal(closest("atach", ["attach", "new", "ls"]), "attach");
  assert.equal(closest("basc", ["strict", "basic", "workspace", "agent"]), "basic");
  assert.equal(closest("cc", ["c", "enter", "tab"]), "c");
  assert.equal(closest("zzzzzz", ["timeout", "idle"]), undefined);
  assert.equal(closest("x", ["timeout"]), undefined);
  assert.equal(closest("RUN", ["run", "exec"]), "run");
  assert.equal(closest("a".repeat(100), ["a".repeat(99)]), undefined);
});

Deno.test("didYouMean phrases the suggestion or says nothing", () => {
  assert.equal(didYouMean("timout", ["timeout"], "--"), '; did you mean "--timeout"?');
  assert.equal(didYouMean("qqqqqq", ["timeout"]), "");
});
