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

Deno.test("plainText is linear on hostile output: a megabyte of CRs, of CR-redraws, with no newline", () => {
  assert.equal(plainText("a\r\r\r\nb\r"), "a\nb");
  for (const pattern of ["\r", "x\r", "\r\r\r\r\nx", "\x1b[", "\x1b]0;", "\x1bP"]) {
    const text = pattern.repeat(Math.ceil((1 << 20) / pattern.length));
    const started = performance.now();
    plainText(text);
    // Quadratic (the old /\r+\n/ over a run of CRs) took minutes; linear takes milliseconds.
    assert.ok(performance.now() - started < 2000, JSON.stringify(pattern));
  }
});
