// deno-lint-ignore-file no-control-regex -- the painter's escape sequences are what is looked for.
import assert from "node:assert/strict";
import type { ScreenSnapshot } from "../protocol/mod.ts";
import { charWidth, clipLine, ViewPainter } from "./attach_view.ts";

function snapshot(lines: string[], cols: number, rows: number, cursor = { x: 0, y: 0 }): ScreenSnapshot {
  return {
    cols,
    rows,
    cursor: { ...cursor, visible: true },
    alt_screen: false,
    title: "",
    partial: false,
    lines,
    cells: lines.map((line) => line === "" ? [] : [{ text: line }]),
  };
}

const plain = (text: string) => text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "");

Deno.test("clipLine: columns cut on both sides, wide characters counted twice, styles kept", () => {
  assert.equal(clipLine([{ text: "abcdef" }], 2, 3), "\x1b[0mcde\x1b[0m");
  assert.equal(
    clipLine([{ text: "ab", bold: true, fg: 1 }, { text: "cd", bg: "#102030" }], 1, 2),
    "\x1b[0;1;38;5;1mb\x1b[0;48;2;16;32;48mc\x1b[0m",
  );
  // 漢 takes columns 1-2: cut by the right edge, it shows as a blank.
  assert.equal(clipLine([{ text: "a漢b" }], 0, 2), "\x1b[0ma \x1b[0m");
  assert.equal(charWidth("漢".codePointAt(0)!), 2);
  assert.equal(charWidth(0x41), 1);
  assert.equal(clipLine([{ text: "a\x1b]52;c;x\x07b" }], 0, 10), "\x1b[0ma]52;c;xb\x1b[0m");
});

Deno.test("ViewPainter: a larger screen is clipped to the window, the status on the last row", () => {
  const wide = "A".repeat(120);
  const painter = new ViewPainter();
  const out = painter.paint(snapshot(["top", wide], 120, 40), { cols: 90, rows: 25 }, " watching");
  const rows = new Map<number, string>();
  for (const m of out.matchAll(/\x1b\[(\d+);1H\x1b\[0m\x1b\[2K(.*?)(?=\x1b\[\d+;1H|\x1b\[\?2026l)/gs)) {
    rows.set(Number(m[1]), plain(m[2]!));
  }
  assert.equal(rows.get(1), "top");
  assert.equal(rows.get(2), "A".repeat(90));
  assert.equal(rows.get(25), " watching".padEnd(90));
  assert.ok(out.startsWith("\x1b[?2026h"));
  // Unchanged rows are not written again.
  const again = painter.paint(snapshot(["top", wide, "new"], 120, 40), { cols: 90, rows: 25 }, " watching");
  assert.equal((again.match(/;1H\x1b\[0m\x1b\[2K/g) ?? []).length, 1);
  assert.match(again, /\x1b\[3;1H\x1b\[0m\x1b\[2K\x1b\[0mnew/);
});

Deno.test("ViewPainter: the view follows the cursor down and right on a larger screen", () => {
  const lines = Array.from({ length: 40 }, (_, i) => `line ${i}`);
  const out = new ViewPainter().paint(
    snapshot(lines, 120, 40, { x: 100, y: 39 }),
    { cols: 90, rows: 25 },
    "s",
  );
  // 24 rows of the session: lines 16…39; columns 11…100; the cursor on the last of them.
  assert.doesNotMatch(out, /line 15/);
  assert.match(out, /\x1b\[24;90H\x1b\[\?25h/);
});
