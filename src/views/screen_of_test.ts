import assert from "node:assert/strict";
import { screenOf } from "./screen_of.ts";
import { screenDiff } from "./parsed.ts";
import type { ViewEvent } from "../protocol/mod.ts";

Deno.test("screenOf: no screen events describe no screen", () => {
  assert.equal(screenOf([{ type: "text", data: "hello\n" }]), null);
});

Deno.test("screenOf: a screen, then rows changed in place, then a scroll", () => {
  const screen = screenOf([
    { type: "screen", rows: ["a", "b", "c"], alternate: false },
    { type: "rows", rows: [{ row: 2, text: "B" }] },
    { type: "rows", scrolled: 1, rows: [{ row: 3, text: "d" }] },
  ]);
  assert.deepEqual(screen, ["B", "c", "d"]);
});

Deno.test("screenOf: rows past the end grow the screen; blanked last rows are trimmed", () => {
  assert.deepEqual(
    screenOf([
      { type: "screen", rows: ["a"], alternate: true },
      { type: "rows", rows: [{ row: 3, text: "c" }] },
    ]),
    ["a", "", "c"],
  );
  assert.deepEqual(
    screenOf([
      { type: "screen", rows: ["a", "b"], alternate: true },
      { type: "rows", rows: [{ row: 2, text: "" }] },
    ]),
    ["a"],
  );
});

function asRows(diff: ReturnType<typeof screenDiff>): ViewEvent {
  return diff.scrolled > 0
    ? { type: "rows", scrolled: diff.scrolled, rows: diff.changed }
    : { type: "rows", rows: diff.changed };
}

Deno.test("screenDiff: rows changed in place are reported without a scroll", () => {
  assert.deepEqual(screenDiff(["a", "b", "c"], ["a", "X", "c"]), {
    scrolled: 0,
    changed: [{ row: 2, text: "X" }],
  });
});

Deno.test("screenDiff: a screen that moved up is one scroll and the new rows", () => {
  const shown = ["top 1", "tasks", "cpu", "mem", "pid 1", "pid 2"];
  const rows = ["tasks", "cpu", "mem", "pid 1", "pid 2"];
  const diff = screenDiff(shown, rows);
  assert.deepEqual(diff, { scrolled: 1, changed: [] });
  assert.deepEqual(screenOf([{ type: "screen", rows: shown, alternate: false }, asRows(diff)]), rows);
});

Deno.test("screenDiff: a scroll whose first row also changed is found from the rows below it", () => {
  const shown = ["clock 1", "a", "b", "c", "d"];
  const rows = ["a2", "b", "c", "d", "e"];
  const diff = screenDiff(shown, rows);
  assert.deepEqual(diff, { scrolled: 1, changed: [{ row: 1, text: "a2" }, { row: 5, text: "e" }] });
  assert.deepEqual(screenOf([{ type: "screen", rows: shown, alternate: false }, asRows(diff)]), rows);
});

Deno.test("screenDiff: a scroll that does not make the report smaller is not used", () => {
  const shown = ["x", "y", "x", "y"];
  const rows = ["x", "y", "x", "z"];
  assert.deepEqual(screenDiff(shown, rows), { scrolled: 0, changed: [{ row: 4, text: "z" }] });
});
