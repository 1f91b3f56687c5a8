import assert from "node:assert/strict";
import { ERROR_CODES, SpecterError } from "../errors.ts";
import { decodeKeeperEvent, decodeKeeperRequest, keeperFailure } from "./messages.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test("decodeKeeperRequest: a request, or an E_PROTOCOL refusal naming its id when it has one", () => {
  assert.deepEqual(decodeKeeperRequest(bytes('{"op":"release","id":"s1"}')), {
    request: { op: "release", id: "s1" },
  });
  const refused = decodeKeeperRequest(bytes('{"op":"resume","id":"s1","from":-1}'));
  assert.ok("refusal" in refused);
  assert.deepEqual(refused.refusal, {
    op: "error",
    id: "s1",
    code: "E_PROTOCOL",
    message: "The keeper got a malformed message",
  });
  for (const garbage of ["", "{", "null", "7", '{"op":"spawn","id":3}', "\xff"]) {
    const decoded = decodeKeeperRequest(bytes(garbage));
    assert.ok("refusal" in decoded && !("id" in decoded.refusal), garbage);
  }
  // A descriptor may not land on the child's stdin, stdout or stderr.
  const spawn = { op: "spawn", id: "s", argv: ["x"], env: {}, cols: 1, rows: 1, tty: true, targets: [2] };
  assert.ok("refusal" in decodeKeeperRequest(bytes(JSON.stringify(spawn))));
});

Deno.test("decodeKeeperEvent: an event, or null for anything else", () => {
  assert.deepEqual(decodeKeeperEvent(bytes('{"op":"hello","pid":5,"count":0}')), {
    op: "hello",
    pid: 5,
    count: 0,
  });
  for (const garbage of ["", "[]", '{"op":"hello"}', '{"op":"exited","id":"s","pid":1,"status":0,"x":1}']) {
    assert.equal(decodeKeeperEvent(bytes(garbage)), null, garbage);
  }
});

Deno.test("keeperFailure: the keeper's code when it is one of the table's own, else E_KEEPER", () => {
  const failure = (code: string) => keeperFailure({ op: "error", id: "s", code, message: "m" });
  assert.equal(failure("E_SPAWN_NOT_FOUND").code, "E_SPAWN_NOT_FOUND");
  assert.equal(failure("E_NOPE").code, "E_KEEPER");
  // Names every object has were taken by `in` as codes of the table: an error no client knows.
  for (const name of ["toString", "constructor", "__proto__", "hasOwnProperty", "valueOf"]) {
    const error = failure(name);
    assert.ok(error instanceof SpecterError);
    assert.equal(error.code, "E_KEEPER", name);
    assert.ok(Object.hasOwn(ERROR_CODES, error.code));
  }
});
