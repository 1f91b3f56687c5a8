import assert from "node:assert/strict";
import { requestIdOf } from "./mod.ts";

Deno.test("requestIdOf: the request's own id, first or last in its line; never one nested in params", () => {
  assert.equal(
    requestIdOf('{"jsonrpc":"2.0","id":999,"method":"tools/call","params":{"x":"', undefined),
    999,
  );
  assert.equal(requestIdOf('{"id":"a\\"b","method":"x"', undefined), 'a"b');
  assert.equal(requestIdOf('{"method":"tools/call","params":{"a', 'xx"},"jsonrpc":"2.0","id":7}'), 7);
  assert.equal(requestIdOf(undefined, 'xx"}},"jsonrpc":"2.0","id":"req-1"}\r'), "req-1");
  // Nested ids are not the request's: a params object that ends with one, or begins with one.
  assert.equal(requestIdOf('{"method":"x","params":{"id":5,', 'a":{"id":6}}}'), null);
  assert.equal(requestIdOf('{"params":{"id":5', undefined), null);
  // Not an id JSON-RPC allows, or none at all.
  assert.equal(requestIdOf('{"id":1.5,', undefined), null);
  assert.equal(requestIdOf('{"id":null,', undefined), null);
  assert.equal(requestIdOf("", ""), null);
  assert.equal(requestIdOf(undefined, undefined), null);
});
