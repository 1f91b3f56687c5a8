import assert from "node:assert/strict";
import { ERROR_CODES, SpecterError } from "../errors.ts";
import { decodeKeeperEvent, keeperFailure } from "./keeper_events.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

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
