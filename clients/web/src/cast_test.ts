import assert from "node:assert/strict";
import { castOf } from "./cast.ts";
import { decodeCastHeader, type Frame } from "../../../src/protocol/mod.ts";

Deno.test("castOf: header from start, output and resizes timed from it, binary decoded", () => {
  const session = { id: "s", title: null, description: null, parent_agent: null };
  const frames: Frame[] = [
    {
      seq: 0,
      ts: 100,
      type: "start",
      protocol: 1,
      version: "x",
      session,
      argv: ["/bin/sh"],
      cwd: "/",
      cols: 100,
      rows: 30,
      pid: 5,
    },
    { seq: 1, ts: 100.5, type: "stdout", data: "hello\r\n" },
    { seq: 2, ts: 101, type: "resize", cols: 90, rows: 20 },
    { seq: 3, ts: 102.25, type: "stdout", data: btoa("\xc3\xa9"), binary: true },
  ];
  const lines = castOf(frames, "demo").trimEnd().split("\n");
  const header = decodeCastHeader(lines[0]!);
  assert.ok("value" in header);
  assert.equal(header.value.width, 100);
  assert.equal(header.value.height, 30);
  assert.deepEqual(lines.slice(1).map((line) => JSON.parse(line)), [
    [0.5, "o", "hello\r\n"],
    [1, "r", "90x20"],
    [2.25, "o", "é"],
  ]);
});
