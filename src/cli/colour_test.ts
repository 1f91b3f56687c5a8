import assert from "node:assert/strict";
import { paint, wantsColour } from "./colour.ts";

Deno.test("colour only on a terminal without NO_COLOR", () => {
  assert.equal(wantsColour(true, null), true); // null: no NO_COLOR (not the caller's environment).
  assert.equal(wantsColour(true, ""), true); // An empty NO_COLOR does not count (no-color.org).
  assert.equal(wantsColour(true, "1"), false);
  assert.equal(wantsColour(false, null), false);
  assert.equal(paint(true).ok("ok"), "\x1b[32mok\x1b[39m");
  assert.equal(paint(true).bad("FAILED"), "\x1b[31mFAILED\x1b[39m");
  assert.equal(paint(false).bad("FAILED"), "FAILED");
});
