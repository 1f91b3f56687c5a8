import assert from "node:assert/strict";
import { plainText, stripAnsi } from "./plain_text.ts";

Deno.test("stripAnsi removes CSI, OSC, charset and control sequences", () => {
  assert.equal(stripAnsi("\x1b[1;31mred\x1b[0m \x1b]0;title\x07ok\x1b(B\x1b[?25l."), "red ok.");
  assert.equal(stripAnsi("a\x1bPq#0\x1b\\b"), "ab");
});

Deno.test("plainText folds CRLF and keeps the final state of a redrawn line", () => {
  assert.equal(plainText("a\r\nb\r\n"), "a\nb\n");
  assert.equal(plainText("10%\r50%\r100%\r\ndone\r\n"), "100%\ndone\n");
  assert.equal(plainText("no newline"), "no newline");
});
