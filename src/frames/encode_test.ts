import assert from "node:assert/strict";
import { decodeStream, encodeFrames, encodeUtf8 } from "./encode.ts";
import type { Frame } from "../protocol/mod.ts";

const frames: Frame[] = [
  { seq: 0, ts: 1.5, type: "ping" },
  { seq: 1, ts: 2, type: "stdout", data: "héllo\nworld" },
  { seq: 2, ts: 3, type: "pong", id: "x" },
];

Deno.test("NDJSON puts one frame per line (newlines in data stay escaped)", () => {
  const text = new TextDecoder().decode(encodeFrames(frames, "ndjson"));
  assert.equal(text.split("\n").length, 4);
  assert.deepEqual(decodeStream(encodeFrames(frames, "ndjson"), "ndjson"), frames);
});

Deno.test("length framing prefixes each frame with its big-endian UTF-8 byte length", () => {
  const bytes = encodeFrames(frames, "length");
  const first = new TextEncoder().encode(JSON.stringify(frames[0]));
  assert.equal(new DataView(bytes.buffer).getUint32(0, false), first.length);
  assert.deepEqual(decodeStream(bytes, "length"), frames);
});

Deno.test("a truncated length stream is reported", () => {
  const bytes = encodeFrames(frames, "length");
  assert.throws(() => decodeStream(bytes.subarray(0, bytes.length - 1), "length"), /Truncated frame/);
  assert.throws(() => decodeStream(bytes.subarray(0, 2), "length"), /Truncated length prefix/);
});

Deno.test("encodeUtf8: ASCII, non-ASCII anywhere, lone surrogates and the empty string", () => {
  const reference = new TextEncoder();
  for (
    const text of [
      "",
      "plain ascii\r\n",
      "é at the start",
      "at the end: 中",
      "emoji 😀 mid",
      "lone \ud800 half",
    ]
  ) {
    assert.deepEqual(encodeUtf8(text), reference.encode(text), JSON.stringify(text));
  }
});
