import assert from "node:assert/strict";
import { concatBytes, fromBase64, toBase64, Utf8Chunker } from "../frames/mod.ts";
import { plainText } from "../session/mod.ts";
import { ByteBlocks, ExecOutput } from "./exec_output.ts";

const encoder = new TextEncoder();

/** The output as `exec` made it before it was kept as bytes: every chunk joined, decoded, made plain. */
function wholeAtOnce(frames: readonly { data: string; binary: boolean }[], raw: boolean): string {
  const bytes = concatBytes(frames.map((f) => f.binary ? fromBase64(f.data) : encoder.encode(f.data)));
  const text = new TextDecoder().decode(bytes);
  return raw ? text : plainText(text);
}

function written(output: ExecOutput): string {
  const pieces: Uint8Array[] = [];
  output.writeJson((bytes) => pieces.push(bytes.slice()));
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(concatBytes(pieces));
}

/** Frames as a session makes them from `bytes` read in pieces of the given sizes. */
function framesOf(bytes: Uint8Array, sizes: () => number): { data: string; binary: boolean }[] {
  const chunker = new Utf8Chunker();
  const frames = [];
  for (let at = 0; at < bytes.length;) {
    const size = sizes();
    const payload = chunker.push(bytes.subarray(at, at + size));
    if (payload !== null) frames.push(payload);
    at += size;
  }
  const last = chunker.end();
  if (last !== null) frames.push(last);
  return frames;
}

Deno.test("exec's output written piece by piece is the JSON string of the output made at once", () => {
  let seed = 7;
  const random = (n: number): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
  const atoms = [
    encoder.encode("\ufeff"),
    encoder.encode("y\r\n"),
    encoder.encode("\x1b[1;31mx\x1b[0m"),
    encoder.encode("\x1b]0;title\x07"),
    encoder.encode('"quoted" \\ back\tslash'),
    encoder.encode("é€😀"),
    encoder.encode("\x7f\u2028\x08\x0c"),
    encoder.encode("\r50%\r100%"),
    new Uint8Array([0xff]),
    new Uint8Array([0xe2, 0x82]), // A character cut short.
    new Uint8Array([0xf0, 0x9f]),
    new Uint8Array([0x80]),
    new Uint8Array([0x00, 0x01, 0x1b]),
  ];
  for (let round = 0; round < 500; round++) {
    const start = seed;
    const parts = Array.from({ length: 1 + random(30) }, () => atoms[random(atoms.length)]!);
    const bytes = concatBytes(parts);
    const frames = framesOf(bytes, () => 1 + random(9));
    for (const raw of [true, false]) {
      const output = new ExecOutput(raw);
      for (const frame of frames) output.stdout(frame.data, frame.binary);
      output.end();
      const expected = JSON.stringify(wholeAtOnce(frames, raw)).slice(1, -1);
      assert.equal(written(output), expected, `seed ${start}, raw ${raw}: ${JSON.stringify(frames)}`);
    }
  }
});

Deno.test("a byte order mark is dropped only where it starts the output", () => {
  for (const raw of [true, false]) {
    const output = new ExecOutput(raw);
    output.stdout("\ufeffa\ufeff", false);
    output.end();
    assert.equal(written(output), "a\ufeff");
  }
});

Deno.test("byte blocks keep every byte in order across blocks, and the end can be taken back", () => {
  const blocks = new ByteBlocks();
  // 64 KiB of 3-byte characters does not divide into blocks: characters are never cut between them.
  const text = "€".repeat(300_000) + "😀".repeat(100_000);
  blocks.append(text);
  const bytes = encoder.encode(text);
  assert.equal(blocks.length, bytes.length);
  const kept = concatBytes([...blocks.pieces(100_000)]);
  assert.deepEqual(kept, bytes);
  for (const piece of blocks.pieces(100_000)) assert.ok(piece.length <= 100_000);

  blocks.truncate(5);
  blocks.appendBytes(new Uint8Array([1, 2, 3]));
  assert.deepEqual(
    concatBytes([...blocks.pieces(4)]),
    concatBytes([bytes.subarray(0, 5), new Uint8Array([1, 2, 3])]),
  );
  blocks.truncate(0);
  assert.equal(blocks.length, 0);
  assert.deepEqual([...blocks.pieces(4)], []);
});

Deno.test("exec keeps plain output as UTF-8 bytes, no more than the plain text's own", () => {
  const output = new ExecOutput(false);
  for (let i = 0; i < 1000; i++) output.stdout("y\r\n".repeat(1000), false);
  output.end();
  assert.equal(output.length, 2 * 1000 * 1000, "y and a newline per line");
});

Deno.test("raw bytes that are not UTF-8 become U+FFFD, three bytes each, however many", () => {
  // 200 000 bytes in four frames: more U+FFFD than one piece of the writer's buffer holds.
  const output = new ExecOutput(true);
  for (let i = 0; i < 4; i++) output.stdout(toBase64(new Uint8Array(50_000).fill(0xff)), true);
  output.end();
  assert.equal(written(output), "\ufffd".repeat(200_000));
});
