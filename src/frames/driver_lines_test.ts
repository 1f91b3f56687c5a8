import assert from "node:assert/strict";
import { type DriverLineResult, DriverLineSplitter } from "./driver_lines.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const lines = (results: DriverLineResult[]) => results.map((r) => "line" in r ? r.line : r.error.code);

Deno.test("lines split across and within chunks, characters cut between chunks", () => {
  const s = new DriverLineSplitter();
  const euro = bytes("€"); // 3 bytes, fed one at a time
  assert.deepEqual(lines(s.push(bytes("a\nb"))), ["a"]);
  assert.deepEqual(lines(s.push(euro.subarray(0, 1))), []);
  assert.deepEqual(lines(s.push(euro.subarray(1))), []);
  assert.deepEqual(lines(s.push(bytes("c\n\nd"))), ["b€c", ""]);
  assert.deepEqual(lines(s.end()), ["d"]);
  assert.deepEqual(lines(s.end()), []);
});

Deno.test("the chunk buffer may be reused by the caller after push", () => {
  const s = new DriverLineSplitter();
  const buffer = bytes("abc");
  s.push(buffer);
  buffer.set(bytes("xyz"));
  assert.deepEqual(lines(s.push(bytes("\n"))), ["abc"]);
});

Deno.test("a line over the cap gives one error at once and is dropped up to its newline", () => {
  const s = new DriverLineSplitter(10);
  assert.deepEqual(lines(s.push(bytes("0123456789"))), [], "exactly the cap is fine so far");
  const over = s.push(bytes("X"));
  assert.deepEqual(lines(over), ["E_PROTOCOL_LINE_TOO_LONG"]);
  assert.equal(s.buffered, 0, "nothing of it is kept");
  assert.deepEqual(lines(s.push(bytes("more of the same line"))), []);
  assert.deepEqual(lines(s.push(bytes("end\nnext\n"))), ["next"]);
  assert.deepEqual(lines(new DriverLineSplitter(10).push(bytes("0123456789\n"))), ["0123456789"]);
  // Over the cap within one chunk, several times.
  assert.deepEqual(lines(new DriverLineSplitter(3).push(bytes("abcd\nok\nefghij\nyes"))), [
    "E_PROTOCOL_LINE_TOO_LONG",
    "ok",
    "E_PROTOCOL_LINE_TOO_LONG",
  ]);
  // An over-long last line without newline yields no line at the end.
  const t = new DriverLineSplitter(3);
  t.push(bytes("abcdef"));
  assert.deepEqual(lines(t.end()), []);
});

Deno.test("the over-long error quotes at most 80 characters", () => {
  const s = new DriverLineSplitter(1000);
  const [result] = s.push(new Uint8Array(5000).fill(0x78));
  assert.ok(result && "error" in result);
  assert.ok(!result.error.message.includes("x".repeat(81)), result.error.message);
  assert.ok(result.error.message.length < 300);
});

Deno.test("invalid UTF-8 is its own typed error, and the next line is fine", () => {
  const s = new DriverLineSplitter();
  const results = s.push(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d, 0x0a, 0x61, 0x0a]));
  assert.deepEqual(lines(results), ["E_PROTOCOL_UTF8", "a"]);
  // A character cut at the end of the line (not across chunks) is invalid too.
  assert.deepEqual(lines(s.push(new Uint8Array([0xe2, 0x82, 0x0a]))), ["E_PROTOCOL_UTF8"]);
});

Deno.test("splitting is linear: 64 MiB without a newline, in 64 KiB chunks, stays at the cap", () => {
  const s = new DriverLineSplitter();
  const chunk = new Uint8Array(64 * 1024).fill(0x61);
  const started = performance.now();
  let errors = 0;
  for (let i = 0; i < 1024; i++) {
    errors += s.push(chunk).length;
    assert.ok(s.buffered <= 1 << 20);
  }
  assert.equal(errors, 1);
  assert.deepEqual(lines(s.push(bytes("\n{}\n"))), ["{}"]);
  // Quadratic re-scanning or concatenation would take minutes; linear takes well under a second.
  assert.ok(performance.now() - started < 5000, `took ${performance.now() - started} ms`);
});

Deno.test("a megabyte of short lines in one chunk is split in one pass", () => {
  const s = new DriverLineSplitter();
  const text = "{}\n".repeat(350_000);
  const started = performance.now();
  assert.equal(s.push(bytes(text)).length, 350_000);
  assert.ok(performance.now() - started < 5000);
});

Deno.test("errorAtLineEnd: an over-long line's error comes at its end, with its first and last bytes", () => {
  const s = new DriverLineSplitter(10, { errorAtLineEnd: true });
  assert.deepEqual(s.push(bytes('{"jsonrpc":"2.0",')), [], "over the cap: nothing yet");
  assert.equal(s.buffered, 0, "nothing of it is held");
  assert.deepEqual(s.push(bytes("x".repeat(1000))), []);
  const [error, next] = s.push(bytes(',"id":999}\n{"a":1}\n'));
  assert.ok(error !== undefined && "error" in error);
  assert.equal(error.error.code, "E_PROTOCOL_LINE_TOO_LONG");
  assert.equal(error.head?.slice(0, 17), '{"jsonrpc":"2.0",');
  assert.ok(error.tail?.endsWith(',"id":999}'), error.tail);
  assert.equal(error.tail?.length, 256, "at most 256 bytes of its end");
  assert.deepEqual(next, { line: '{"a":1}' });
  // An over-long line the input ends in is reported at the end too.
  const t = new DriverLineSplitter(3, { errorAtLineEnd: true });
  assert.deepEqual(t.push(bytes("abcdef")), []);
  assert.deepEqual(lines(t.end()), ["E_PROTOCOL_LINE_TOO_LONG"]);
});
