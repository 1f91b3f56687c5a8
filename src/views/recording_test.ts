import assert from "node:assert/strict";
import { MAX_COLS, MAX_ROWS } from "../protocol/mod.ts";
import { parseRecording, viewRecording, viewSize } from "./recording.ts";

Deno.test("viewSize: a recording's terminal is cut to the largest Specter makes", () => {
  assert.deepEqual(viewSize(undefined, undefined), { cols: 80, rows: 24 });
  assert.deepEqual(viewSize(132, 43), { cols: 132, rows: 43 });
  assert.deepEqual(viewSize(2 ** 31 - 1, 2 ** 53), { cols: MAX_COLS, rows: MAX_ROWS });
});

Deno.test("viewRecording: a header and a resize of 2^31 columns are parsed in a bounded terminal", async () => {
  const text = [
    JSON.stringify({ version: 2, width: 2 ** 31 - 1, height: 2 ** 31 - 1 }),
    JSON.stringify([0.1, "o", "hello\r\n"]),
    JSON.stringify([0.5, "r", `${2 ** 31 - 1}x${2 ** 31 - 1}`]),
    JSON.stringify([0.9, "o", "world\r\n"]),
  ].join("\n");
  const recording = parseRecording(text);
  assert.ok(!("problem" in recording));
  const before = Deno.memoryUsage().rss;
  const events = await viewRecording(recording, "parsed");
  // 1000 × 500 cells at most: far below what 2^31 columns would take (the emulator allocates each cell).
  assert.ok(Deno.memoryUsage().rss - before < 256 * 1024 * 1024);
  const shown = JSON.stringify(events);
  assert.match(shown, /hello/);
  assert.match(shown, /world/);
});
