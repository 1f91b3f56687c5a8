import assert from "node:assert/strict";
import { type ScreenSnapshot, ScreenSnapshotSchema } from "../protocol/mod.ts";
import { snapshotText } from "./snapshot.ts";

const SNAP: ScreenSnapshot = {
  cols: 80,
  rows: 24,
  cursor: { x: 3, y: 5, visible: true },
  alt_screen: false,
  title: 'say "hi"\n',
  partial: false,
  lines: ["first", "", "  third"],
};

Deno.test("snapshotText: header line, then every line ending in \\n", () => {
  assert.equal(
    snapshotText(SNAP),
    '# 80x24 cursor 3,5 visible alt=false title="say \\"hi\\"\\n"\nfirst\n\n  third\n',
  );
});

Deno.test("snapshotText: hidden cursor, alternate screen and partial are in the header", () => {
  const text = snapshotText({
    ...SNAP,
    cursor: { x: 0, y: 0, visible: false },
    alt_screen: true,
    partial: true,
    title: "",
    lines: [],
  });
  assert.equal(text, '# 80x24 cursor 0,0 hidden alt=true title="" partial\n');
});

Deno.test("snapshotText: identical snapshots give byte-identical text; cells do not change it", () => {
  const copy = structuredClone(SNAP);
  assert.equal(snapshotText(copy), snapshotText(SNAP));
  assert.equal(snapshotText({ ...SNAP, cells: [[{ text: "first", bold: true }]] }), snapshotText(SNAP));
});

Deno.test("ScreenSnapshotSchema: accepts the compact cell form, rejects unknown fields and bad colours", () => {
  ScreenSnapshotSchema.parse({ ...SNAP, cells: [[{ text: "a", fg: 1, bg: "#00ff00", inverse: true }], []] });
  assert.throws(() => ScreenSnapshotSchema.parse({ ...SNAP, extra: 1 }));
  assert.throws(() => ScreenSnapshotSchema.parse({ ...SNAP, cells: [[{ text: "a", fg: 256 }]] }));
  assert.throws(() => ScreenSnapshotSchema.parse({ ...SNAP, cells: [[{ text: "a", bg: "red" }]] }));
  assert.throws(() => ScreenSnapshotSchema.parse({ ...SNAP, cells: [[{ text: "a", bold: false }]] }));
});
