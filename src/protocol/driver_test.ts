import assert from "node:assert/strict";
import { DRIVER_SIGNALS, excerpt, isBase64, MAX_COLS, MAX_ROWS, parseDriverLine } from "./driver.ts";
import { SpecterError } from "../errors.ts";

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
  for (const grace_ms of [0, 2000, 2 ** 31 - 1]) {
    assert.deepEqual(parseDriverLine(JSON.stringify({ v: 1, type: "terminate", grace_ms })), {
      v: 1,
      type: "terminate",
      grace_ms,
    });
  }
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
  ['{"v":1,"type":"resize","cols":0,"rows":10}', "E_RESIZE_RANGE", /"cols" must be from 1 to 1000, got 0/],
  ['{"v":1,"type":"resize","cols":100000,"rows":100000}', "E_RESIZE_RANGE", /"cols" must be from 1 to 1000/],
  ['{"v":1,"type":"resize","cols":1000,"rows":501}', "E_RESIZE_RANGE", /"rows" must be from 1 to 500/],
  ['{"v":1,"type":"resize","cols":"80","rows":24}', "E_PROTOCOL", /field "cols"/],
  ['{"v":1,"type":"input","data":"!!!!","binary":true}', "E_PROTOCOL_BASE64", /not padded standard base64/],
  ['{"v":1,"type":"input","data":"YQ","binary":true}', "E_PROTOCOL_BASE64", /base64/],
  ['{"v":1,"type":"input","data":"Y Q==","binary":true}', "E_PROTOCOL_BASE64", /base64/],
  ['{"v":1,"type":"signal","signal":"SEGV"}', "E_PROTOCOL", /field "signal"/],
  ['{"v":1,"type":"ping","extra":1}', "E_PROTOCOL", /Invalid "ping" message/],
  // A grace a timer cannot wait: it used to overflow and kill at once.
  [
    '{"v":1,"type":"terminate","grace_ms":2147483648}',
    "E_PROTOCOL",
    /"grace_ms": must be at most 2147483647 ms/,
  ],
  [
    '{"v":1,"type":"terminate","grace_ms":4294970296}',
    "E_PROTOCOL",
    /"grace_ms": must be at most 2147483647 ms/,
  ],
  ['{"v":1,"type":"terminate","grace_ms":1e300}', "E_PROTOCOL", /field "grace_ms"/],
  ['{"v":1,"type":"terminate","grace_ms":-1}', "E_PROTOCOL", /field "grace_ms"/],
  ['{"v":1,"type":"terminate","grace_ms":1.5}', "E_PROTOCOL", /field "grace_ms"/],
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

Deno.test("the largest resize and valid base64 parse", () => {
  assert.equal(
    parseDriverLine(JSON.stringify({ v: 1, type: "resize", cols: MAX_COLS, rows: MAX_ROWS })).type,
    "resize",
  );
  for (const data of ["", "YQ==", "YWI=", "YWJj", "+/+/"]) {
    assert.equal(parseDriverLine(JSON.stringify({ v: 1, type: "input", data, binary: true })).type, "input");
    assert.equal(isBase64(data), true, data);
  }
  // Not binary: any text goes as typed.
  assert.equal(parseDriverLine(JSON.stringify({ v: 1, type: "input", data: "!!!" })).type, "input");
});

Deno.test("errors quote at most 80 characters of the input, whatever field holds it", () => {
  const long = "x".repeat(100_000);
  const lines = [
    long,
    `{"v":1,"type":"${long}"}`,
    `{"v":"${long}","type":"ping"}`,
    `{"v":1,"type":"ping","${long}":1}`,
    `{"v":1,"type":"key","key":"${long}"}`,
    `{"v":1,"type":"signal","signal":"${long}"}`,
    `{"v":1,"type":"resize","cols":${"9".repeat(5000)},"rows":1}`,
    `{"v":1,"type":"input","data":"${long}!","binary":true}`,
    `[${long}`,
  ];
  for (const line of lines) {
    assert.throws(() => parseDriverLine(line), (e: unknown) => {
      const text = JSON.stringify(e instanceof SpecterError ? e.toJSON() : String(e));
      assert.ok(!text.includes("x".repeat(81)) && !text.includes("9".repeat(81)), text.slice(0, 400));
      assert.ok(text.length < 1000, `${text.length} characters: ${text.slice(0, 200)}`);
      return true;
    });
  }
});

Deno.test("excerpt keeps short values and clips long ones", () => {
  assert.equal(excerpt("ab"), '"ab"');
  assert.equal(excerpt(undefined), "nothing");
  assert.match(excerpt("y".repeat(200)), /^"y{79}… \(202 characters\)$/);
});
