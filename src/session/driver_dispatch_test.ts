import assert from "node:assert/strict";
import { applyDriverMessage, type DriverTarget } from "./driver_dispatch.ts";
import { parseDriverLine } from "../protocol/mod.ts";
import { ProtocolError } from "../errors.ts";

/** A target that logs each call as `[name, ...args]`. */
function recorder(): { calls: unknown[][]; target: DriverTarget } {
  const calls: unknown[][] = [];
  const log = (name: string) => (...args: unknown[]) => void calls.push([name, ...args]);
  return {
    calls,
    target: {
      write: log("write"),
      press: log("press"),
      resize: log("resize"),
      signal: log("signal"),
      terminate: log("terminate"),
      pong: log("pong"),
      snapshot: log("snapshot"),
    },
  };
}

const CASES: readonly [string, unknown[]][] = [
  ['{"v":1,"type":"input","data":"ls\\r"}', ["write", "ls\r"]],
  ['{"v":1,"type":"key","key":"Enter"}', ["press", "Enter"]],
  ['{"v":1,"type":"resize","cols":100,"rows":30}', ["resize", 100, 30]],
  ['{"v":1,"type":"signal","signal":"INT"}', ["signal", "INT"]],
  ['{"v":1,"type":"terminate"}', ["terminate", undefined]],
  ['{"v":1,"type":"terminate","grace_ms":0}', ["terminate", 0]],
  ['{"v":1,"type":"terminate","grace_ms":2147483647}', ["terminate", 2147483647]],
  ['{"v":1,"type":"ping","id":7}', ["pong", 7]],
  ['{"v":1,"type":"ping"}', ["pong", undefined]],
  ['{"v":1,"type":"snapshot","name":"a","cells":true}', ["snapshot", "a", true]],
  ['{"v":1,"type":"snapshot"}', ["snapshot", undefined, false]],
];

for (const [line, expected] of CASES) {
  Deno.test(`applyDriverMessage: ${line}`, () => {
    const { calls, target } = recorder();
    applyDriverMessage(target, parseDriverLine(line));
    assert.deepEqual(calls, [expected]);
  });
}

Deno.test("applyDriverMessage: binary input is decoded to bytes", () => {
  const { calls, target } = recorder();
  applyDriverMessage(target, parseDriverLine('{"v":1,"type":"input","data":"AP8=","binary":true}'));
  assert.deepEqual(calls, [["write", new Uint8Array([0, 255])]]);
});

Deno.test("applyDriverMessage: binary input that is not padded base64 is refused before anything is typed", () => {
  const { calls, target } = recorder();
  assert.throws(
    () => applyDriverMessage(target, parseDriverLine('{"v":1,"type":"input","data":"AP8","binary":true}')),
    (error: unknown) => error instanceof ProtocolError && error.code === "E_PROTOCOL_BASE64",
  );
  assert.deepEqual(calls, []);
});

Deno.test("applyDriverMessage: a library caller's terminate with a grace no timer can wait is E_PROTOCOL, nothing ended", () => {
  for (const grace_ms of [2 ** 31, 2 ** 32 + 3000, Infinity, NaN, -1, 1.5]) {
    const { calls, target } = recorder();
    assert.throws(
      () => applyDriverMessage(target, { v: 1, type: "terminate", grace_ms }),
      (error: unknown) =>
        error instanceof ProtocolError && error.code === "E_PROTOCOL" && /grace_ms/.test(error.message),
      String(grace_ms),
    );
    assert.deepEqual(calls, []);
  }
});
