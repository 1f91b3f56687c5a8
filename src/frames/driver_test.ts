import assert from "node:assert/strict";
import { DRIVER_SIGNALS, parseDriverLine } from "./driver.ts";

Deno.test("valid driver messages parse", () => {
  assert.deepEqual(parseDriverLine('{"v":1,"type":"input","data":"ls\\r"}'), {
    v: 1,
    type: "input",
    data: "ls\r",
  });
  assert.deepEqual(parseDriverLine('{"v":1,"type":"key","key":"ctrl-c"}'), {
    v: 1,
    type: "key",
    key: "ctrl-c",
  });
  assert.deepEqual(parseDriverLine('{"v":1,"type":"terminate"}'), { v: 1, type: "terminate" });
  for (const signal of DRIVER_SIGNALS) {
    assert.equal(parseDriverLine(JSON.stringify({ v: 1, type: "signal", signal })).type, "signal");
  }
});

const BAD: readonly [string, string, RegExp][] = [
  ["{", "E_PROTOCOL", /not valid JSON/],
  ["42", "E_PROTOCOL", /must be a JSON object/],
  ['{"type":"ping"}', "E_PROTOCOL_VERSION", /must be 1, got nothing/],
  ['{"v":"1","type":"ping"}', "E_PROTOCOL_VERSION", /got "1"/],
  ['{"v":1,"type":"dance"}', "E_PROTOCOL", /Unknown driver message type "dance"/],
  ['{"v":1}', "E_PROTOCOL", /Unknown driver message type nothing/],
  ['{"v":1,"type":"input"}', "E_PROTOCOL", /field "data"/],
  ['{"v":1,"type":"resize","cols":0,"rows":10}', "E_PROTOCOL", /field "cols"/],
  ['{"v":1,"type":"signal","signal":"SEGV"}', "E_PROTOCOL", /field "signal"/],
  ['{"v":1,"type":"ping","extra":1}', "E_PROTOCOL", /Invalid "ping" message/],
];

for (const [line, code, message] of BAD) {
  Deno.test(`driver line ${line} fails with ${code}`, () => {
    assert.throws(() => parseDriverLine(line), (e: unknown) => {
      const error = e as { code: string; message: string };
      return error.code === code && message.test(error.message);
    });
  });
}

Deno.test("snapshot messages parse; name and cells are optional", () => {
  assert.deepEqual(parseDriverLine('{"v":1,"type":"snapshot"}'), { v: 1, type: "snapshot" });
  assert.deepEqual(parseDriverLine('{"v":1,"type":"snapshot","name":"menu","cells":true}'), {
    v: 1,
    type: "snapshot",
    name: "menu",
    cells: true,
  });
  assert.throws(() => parseDriverLine('{"v":1,"type":"snapshot","cells":"yes"}'), /field "cells"/);
  assert.throws(() => parseDriverLine('{"v":1,"type":"snapshot","name":7}'), /field "name"/);
});
