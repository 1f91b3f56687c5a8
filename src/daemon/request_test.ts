import assert from "node:assert/strict";
import { DaemonError } from "../errors.ts";
import { JSONRPC_ERRORS } from "../protocol/mod.ts";
import { METHOD_PARAMS, paramsOf, parseRequest, RpcError } from "./request.ts";

Deno.test("parseRequest: a JSON-RPC 2.0 request, else E_DAEMON_PEER", () => {
  assert.deepEqual(parseRequest('{"jsonrpc":"2.0","id":1,"method":"session.list"}'), {
    jsonrpc: "2.0",
    id: 1,
    method: "session.list",
  });
  for (
    const line of ["", "{", "[]", '{"jsonrpc":"1.0","method":"x"}', '{"jsonrpc":"2.0","id":{},"method":"x"}']
  ) {
    assert.throws(
      () => parseRequest(line),
      (e: unknown) => e instanceof DaemonError && e.code === "E_DAEMON_PEER",
    );
  }
});

Deno.test("paramsOf: checked parameters with defaults, else INVALID_PARAMS naming each issue", () => {
  assert.deepEqual(paramsOf("session.kill", { name: "a" }), { name: "a", purge: false });
  assert.throws(() => paramsOf("session.attach", { name: "../x", from: -1 }), (e: unknown) => {
    assert.ok(e instanceof RpcError);
    assert.equal(e.code, JSONRPC_ERRORS.INVALID_PARAMS);
    assert.match(e.message, /^name: .*; from: /);
    return true;
  });
  assert.throws(() => paramsOf("daemon.hello", null), /\(params\): /);
  assert.deepEqual(Object.keys(METHOD_PARAMS).sort(), [
    "agent.open",
    "daemon.hello",
    "session.attach",
    "session.create",
    "session.detach",
    "session.kill",
    "session.screen",
    "session.send",
  ]);
});
