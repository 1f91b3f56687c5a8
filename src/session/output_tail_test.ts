import assert from "node:assert/strict";
import { CursorKeyMode, MAX_LINE, OutputTail } from "./output_tail.ts";

Deno.test("keeps the last N lines with ANSI removed and trailing blanks trimmed", () => {
  const tail = new OutputTail(3);
  tail.push("one\r\n\x1b[31mtwo\x1b[0m\r\nthree  \r\nfour\r\n\r\n");
  assert.deepEqual(tail.lastLines(), ["three", "four"]);
  assert.equal(tail.currentLine, "");
});

Deno.test("no output means no lines", () => {
  assert.deepEqual(new OutputTail(5).lastLines(), []);
});

Deno.test("carriage returns overwrite, backspace moves left, erase-line clears", () => {
  const tail = new OutputTail(5);
  tail.push("progress 10%\rprogress 100%\r\n");
  tail.push("abc\b\bX\r\n");
  tail.push("typed junk\x1b[2K\rclean\r\n");
  tail.push("$ ");
  assert.deepEqual(tail.lastLines(), ["progress 100%", "aXc", "clean", "$"]);
  assert.equal(tail.currentLine, "$ ");
});

Deno.test("escape sequences split across chunks are still removed", () => {
  const tail = new OutputTail(5);
  tail.push("a\x1b[3");
  tail.push("1mb\x1b]0;title");
  tail.push("\x07c\r\n");
  assert.deepEqual(tail.lastLines(), ["abc"]);
});

Deno.test("a flood of lines keeps only the tail, and long lines are capped", () => {
  const tail = new OutputTail(2);
  tail.push(Array.from({ length: 10_000 }, (_, i) => `line ${i}`).join("\r\n") + "\r\n");
  assert.deepEqual(tail.lastLines(), ["line 9998", "line 9999"]);
  tail.push("x".repeat(MAX_LINE * 3));
  assert.equal(tail.currentLine.length, MAX_LINE);
});

Deno.test("DECCKM is followed, also when split across chunks or combined with other modes", () => {
  const mode = new CursorKeyMode();
  mode.push("\x1b[?1h");
  assert.equal(mode.application, true);
  mode.push("text \x1b[?1");
  mode.push("l more");
  assert.equal(mode.application, false);
  mode.push("\x1b[?1049;1h");
  assert.equal(mode.application, true);
  mode.push("\x1b[?25l");
  assert.equal(mode.application, true);
});

Deno.test("hostile cursor moves: huge CUF/CHA neither throw nor build huge strings; time stays linear", () => {
  const tail = new OutputTail(2);
  tail.push("ab\x1b[2147483647Cx");
  assert.equal(tail.currentLine.length, MAX_LINE);
  assert.ok(tail.currentLine.endsWith(" x"));
  /** Milliseconds to push 1 MiB of `pattern` after a line at the cap. */
  function mibOf(pattern: string): number {
    const flood = new OutputTail(24);
    flood.push("a".repeat(MAX_LINE + 10));
    const chunk = pattern.repeat(Math.ceil(4096 / pattern.length));
    const started = performance.now();
    for (let i = 0; i < 256; i++) flood.push(chunk); // 1 MiB.
    return performance.now() - started;
  }
  for (const pattern of ["\x1b[1000000Gx", "\x1b[2147483647Cx", "\rx", "\t", "\bx", "\x1b[1K"]) {
    // Against plain text measured just before, so a loaded machine slows both. Rewriting a line at the cap
    // costs up to its length a character ("\rx": a few hundred times plain text); unbounded work was far
    // more: 28 s per MiB for CHA 1000000 (a million spaces per 12 bytes); a RangeError for CUF 2^31.
    const plain = mibOf("x");
    const hostile = mibOf(pattern);
    assert.ok(
      hostile < 1000 * plain + 1000,
      `${JSON.stringify(pattern)}: ${hostile} ms, plain text ${plain} ms`,
    );
  }
});

Deno.test("a flood of colours cut at every read keeps the same tail and modes as the whole", () => {
  // Each read ends inside a sequence, so one is always pending when the next (with many lines) comes.
  const line = "\x1b[1;31mx\x1b[0m\r\n";
  const whole = line.repeat(5000) + "\x1b[?1h" + line.repeat(100) + "last \x1b[?1";
  const cut = [];
  for (let at = 0; at < whole.length; at += 4093) cut.push(whole.slice(at, at + 4093));
  const tail = new OutputTail(4);
  const mode = new CursorKeyMode();
  for (const piece of cut) {
    tail.push(piece);
    mode.push(piece);
  }
  const once = new OutputTail(4);
  once.push(whole);
  assert.deepEqual(tail.lastLines(), once.lastLines());
  assert.deepEqual(tail.lastLines(), ["x", "x", "x", "last"]);
  assert.equal(mode.application, true);
  mode.push("l");
  assert.equal(mode.application, false, "a mode sequence cut by a read is seen when it ends");
});
