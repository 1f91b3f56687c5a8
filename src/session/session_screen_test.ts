import assert from "node:assert/strict";
import type { FrameBody } from "../protocol/mod.ts";
import { SessionScreen } from "./session_screen.ts";

function host() {
  const state = { frames: [] as FrameBody[], answered: 0, pressure: [] as boolean[] };
  return {
    state,
    host: {
      emit: (body: FrameBody) => void state.frames.push(body),
      pressure: (behind: boolean) => void state.pressure.push(behind),
      answered: () => void state.answered++,
    },
  };
}

Deno.test("SessionScreen: a snapshot request is owed until its frame is emitted, then answered", async () => {
  const { state, host: h } = host();
  const screen = new SessionScreen({ cols: 20, rows: 4, screen: false }, h);
  screen.output("hello\r\nworld");
  screen.request("first", false);
  assert.equal(screen.owed, 1);
  await screen.snapshot(); // Settles after the request's own snapshot.
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(screen.owed, 0);
  assert.equal(state.answered, 1);
  const frame = state.frames[0] as { type: string; name: string; screen: { lines: string[] } };
  assert.equal(frame.type, "snapshot");
  assert.equal(frame.name, "first");
  assert.deepEqual(frame.screen.lines, ["hello", "world"]);
});

Deno.test("SessionScreen: application cursor keys follow the output, before and after a model exists", async () => {
  const { host: h } = host();
  const screen = new SessionScreen({ cols: 20, rows: 4, screen: false }, h);
  assert.equal(screen.applicationCursor, false);
  screen.output("\x1b[?1h"); // DECCKM on: the model is being made; the scanner answers meanwhile.
  assert.equal(screen.applicationCursor, true);
  await screen.snapshot();
  assert.equal(screen.applicationCursor, true); // The model, caught up.
  screen.output("\x1b[?1l");
  await screen.snapshot();
  assert.equal(screen.applicationCursor, false);
});

Deno.test("SessionScreen: a resize reaches the model in order with the output", async () => {
  const { host: h } = host();
  const screen = new SessionScreen({ cols: 20, rows: 4, screen: true }, h);
  screen.output("abc");
  screen.resize(30, 6);
  const snap = await screen.snapshot();
  assert.equal(snap.cols, 30);
  assert.equal(snap.rows, 6);
  assert.deepEqual(snap.lines, ["abc"]);
});
