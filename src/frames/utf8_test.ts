import assert from "node:assert/strict";
import { fromBase64, incompleteTail, payloadText, toBase64, toPayload, Utf8Chunker } from "./utf8.ts";

const bytes = (...values: number[]) => new Uint8Array(values);

Deno.test("incompleteTail finds a partial trailing sequence of every length", () => {
  assert.equal(incompleteTail(bytes(0x61)), 0);
  assert.equal(incompleteTail(bytes(0x61, 0xc3)), 1);
  assert.equal(incompleteTail(bytes(0xe2, 0x82)), 2);
  assert.equal(incompleteTail(bytes(0xf0, 0x9f, 0x98)), 3);
  assert.equal(incompleteTail(bytes(0xf0, 0x9f, 0x98, 0x80)), 0);
  assert.equal(incompleteTail(bytes(0xc3, 0xa9)), 0);
  assert.equal(incompleteTail(bytes(0xff)), 0, "an invalid byte is not held back");
  assert.equal(incompleteTail(bytes(0x80, 0x80, 0x80)), 0, "stray continuation bytes are not held back");
  assert.equal(incompleteTail(bytes()), 0);
});

Deno.test("a character split across pushes is delivered whole", () => {
  const chunker = new Utf8Chunker();
  const emoji = new TextEncoder().encode("a😀b");
  for (let cut = 1; cut < emoji.length; cut++) {
    const out = [chunker.push(emoji.subarray(0, cut)), chunker.push(emoji.subarray(cut))]
      .filter((p) => p !== null);
    assert.ok(out.every((p) => !p.binary), `cut ${cut}`);
    assert.equal(out.map((p) => p.data).join(""), "a😀b", `cut ${cut}`);
    assert.equal(chunker.pending, 0);
  }
});

Deno.test("a chunk that is only the start of a character yields nothing yet", () => {
  const chunker = new Utf8Chunker();
  assert.equal(chunker.push(bytes(0xf0, 0x9f)), null);
  assert.equal(chunker.pending, 2);
  assert.deepEqual(chunker.push(bytes(0x98, 0x80)), { data: "😀", binary: false });
});

Deno.test("invalid UTF-8 goes as base64 with the exact bytes", () => {
  const chunker = new Utf8Chunker();
  const payload = chunker.push(bytes(0x6f, 0x6b, 0xff, 0xfe));
  assert.deepEqual(payload, { data: toBase64(bytes(0x6f, 0x6b, 0xff, 0xfe)), binary: true });
  assert.deepEqual([...fromBase64(payload!.data)], [0x6f, 0x6b, 0xff, 0xfe]);
});

Deno.test("an incomplete character at end of stream is flushed as base64", () => {
  const chunker = new Utf8Chunker();
  assert.deepEqual(chunker.push(bytes(0x61, 0xe2, 0x82)), { data: "a", binary: false });
  assert.deepEqual(chunker.end(), { data: toBase64(bytes(0xe2, 0x82)), binary: true });
  assert.equal(chunker.end(), null);
});

Deno.test("a byte order mark is delivered, not swallowed", () => {
  assert.deepEqual(new Utf8Chunker().push(bytes(0xef, 0xbb, 0xbf, 0x61)), { data: "\ufeffa", binary: false });
});

Deno.test("toPayload: valid UTF-8 is text (a BOM kept), anything else base64 of the exact bytes", () => {
  assert.deepEqual(toPayload(new TextEncoder().encode("héllo")), { data: "héllo", binary: false });
  assert.deepEqual(toPayload(new Uint8Array([0xef, 0xbb, 0xbf, 0x41])), { data: "\ufeffA", binary: false });
  assert.deepEqual(toPayload(new Uint8Array([0xff, 0x41])), { data: "/0E=", binary: true });
  assert.deepEqual(toPayload(new Uint8Array([0xe2, 0x82])), { data: "4oI=", binary: true });
});

Deno.test("payloadText: text as is, base64 bytes decoded with U+FFFD for what is not UTF-8", () => {
  assert.equal(payloadText({ data: "héllo" }), "héllo");
  assert.equal(payloadText({ data: "/0E=", binary: true }), "\ufffdA");
});
