import assert from "node:assert/strict";
import { decodeCastEvent, decodeCastHeader, encodeCastEvent, encodeCastHeader } from "./asciicast.ts";

Deno.test("encodeCastHeader → decodeCastHeader round-trips, version first and no title when absent", () => {
  const start = { width: 80, height: 24, timestamp: 1700000000, env: { TERM: "xterm-256color" } };
  const line = encodeCastHeader(start);
  assert.equal(
    line,
    '{"version":2,"width":80,"height":24,"timestamp":1700000000,"env":{"TERM":"xterm-256color"}}',
  );
  assert.deepEqual(decodeCastHeader(line), { value: { version: 2, ...start } });
  const titled = encodeCastHeader({ ...start, title: "menu" });
  assert.ok(titled.endsWith(',"title":"menu"}'));
});

Deno.test("encodeCastEvent → decodeCastEvent round-trips every code", () => {
  for (const code of ["o", "i", "r", "m"] as const) {
    const line = encodeCastEvent([1.25, code, "a\r\n\x1b[0m"]);
    assert.equal(line, JSON.stringify([1.25, code, "a\r\n\x1b[0m"]));
    assert.deepEqual(decodeCastEvent(line, 2), { value: [1.25, code, "a\r\n\x1b[0m"] });
  }
  assert.throws(() => encodeCastEvent([-1, "o", "x"]));
});

Deno.test("a header from another tool decodes; a malformed header or event is a problem naming the line", () => {
  assert.ok("value" in decodeCastHeader('{"version":2,"width":80,"height":24,"idle_time_limit":2}'));
  assert.ok("value" in decodeCastHeader('{"version":2}'));
  const bad = { problem: "does not start with an asciicast v2 header" };
  assert.deepEqual(decodeCastHeader("garbage"), bad);
  assert.deepEqual(decodeCastHeader('{"version":1,"width":80,"height":24}'), bad);
  assert.deepEqual(decodeCastHeader('{"version":2,"width":"80"}'), bad);
  for (const line of ['[1,"o"]', '[1,"x","a"]', '["1","o","a"]', "not json", '[1,"o","a",4]']) {
    assert.deepEqual(decodeCastEvent(line, 7), { problem: "line 7 is not an asciicast event" }, line);
  }
});
