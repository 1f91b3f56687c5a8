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

Deno.test("decodeKeeperRequest: close_input names a session and a non-negative relay offset", () => {
  assert.deepEqual(decodeKeeperRequest(bytes('{"op":"close_input","id":"s1","after":0}')), {
    request: { op: "close_input", id: "s1", after: 0 },
  });
  assert.deepEqual(decodeKeeperRequest(bytes('{"op":"close_input","id":"s1","after":4096}')), {
    request: { op: "close_input", id: "s1", after: 4096 },
  });
  for (
    const bad of [
      { op: "close_input", id: "s1" },
      { op: "close_input", id: "s1", after: -1 },
      { op: "close_input", id: "s1", after: 1.5 },
      { op: "close_input", id: "s1", after: "3" },
      { op: "close_input", id: "s1", after: 3, tty: false },
      { op: "close_input", after: 3 },
      { op: "close_input", id: 7, after: 3 },
    ]
  ) {
    const decoded = decodeKeeperRequest(bytes(JSON.stringify(bad)));
    assert.ok("refusal" in decoded, JSON.stringify(bad));
    assert.equal(decoded.refusal.op === "error" && decoded.refusal.code, "E_PROTOCOL");
  }
});

Deno.test("decodeKeeperEvent: a kept session says whether it has a terminal and whether its input was closed", () => {
  const session = { id: "s", pid: 5, tty_path: "/dev/pts/3", status: null, held_from: 0, read_to: 9 };
  const kept = decodeKeeperEvent(
    bytes(JSON.stringify({ op: "kept", session: { ...session, tty: false, input_closed: true } })),
  );
  assert.deepEqual(kept, { op: "kept", session: { ...session, tty: false, input_closed: true } });
  // A keeper of an earlier version says neither: a terminal, input open.
  assert.deepEqual(decodeKeeperEvent(bytes(JSON.stringify({ op: "kept", session }))), {
    op: "kept",
    session: { ...session, tty: true, input_closed: false },
  });
  for (const bad of [{ tty: "no" }, { input_closed: 1 }, { closed: true }]) {
    assert.equal(
      decodeKeeperEvent(bytes(JSON.stringify({ op: "kept", session: { ...session, ...bad } }))),
      null,
    );
  }
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
