import assert from "node:assert/strict";
import { OutputPath } from "./output_path.ts";
import type { FrameBody } from "../protocol/mod.ts";

/** An output path with a budget of `limit` bytes (null: none) and every effect logged. */
function fakePath(limit: number | null) {
  const state = {
    admitted: 0,
    discarding: false,
    exceeded: 0,
    activity: 0,
    frames: [] as FrameBody[],
    texts: [] as string[],
  };
  const path = new OutputPath({
    budgets: {
      admit: (bytes) => {
        const n = limit === null ? bytes.length : Math.min(bytes.length, Math.max(0, limit - state.admitted));
        state.admitted += n;
        return bytes.subarray(0, n);
      },
      outputExceeded: () => void state.exceeded++,
    },
    flow: {
      get discarding() {
        return state.discarding;
      },
      discard: () => void (state.discarding = true),
    },
    activity: () => void state.activity++,
    emit: (body) => void state.frames.push(body),
    text: (text) => void state.texts.push(text),
  });
  return { state, path };
}

const bytes = (...values: number[]) => new Uint8Array(values);

Deno.test("OutputPath: text becomes stdout frames and feeds the text consumers", () => {
  const { state, path } = fakePath(null);
  path.read(new TextEncoder().encode("hello\n"));
  assert.deepEqual(state.frames, [{ type: "stdout", data: "hello\n" }]);
  assert.deepEqual(state.texts, ["hello\n"]);
  assert.equal(state.activity, 1);
});

Deno.test("OutputPath: a character split across reads is delivered whole", () => {
  const { state, path } = fakePath(null);
  path.read(bytes(0x61, 0xc3)); // "a" and the first byte of "é".
  path.read(bytes(0xa9, 0x62));
  assert.deepEqual(state.frames, [{ type: "stdout", data: "a" }, { type: "stdout", data: "éb" }]);
});

Deno.test("OutputPath: bytes that are not UTF-8 go out as base64, the consumers get lossy text", () => {
  const { state, path } = fakePath(null);
  path.read(bytes(0xff, 0x41));
  assert.deepEqual(state.frames, [{ type: "stdout", data: "/0E=", binary: true }]);
  assert.deepEqual(state.texts, ["\ufffdA"]);
});

Deno.test("OutputPath: an incomplete character at the end is flushed as base64", () => {
  const { state, path } = fakePath(null);
  path.read(bytes(0x61, 0xe2, 0x82));
  path.end();
  assert.deepEqual(state.frames, [
    { type: "stdout", data: "a" },
    { type: "stdout", data: "4oI=", binary: true },
  ]);
});

Deno.test("OutputPath: past the budget, what fits is delivered, then output is dropped for good", () => {
  const { state, path } = fakePath(4);
  path.read(new TextEncoder().encode("abcdef"));
  assert.deepEqual(state.frames, [{ type: "stdout", data: "abcd" }]);
  assert.equal(state.exceeded, 1);
  assert.equal(state.discarding, true);
  path.read(new TextEncoder().encode("more"));
  path.end();
  assert.equal(state.frames.length, 1);
  assert.equal(state.activity, 2); // Dropped output still counts as activity.
});
