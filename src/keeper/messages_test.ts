import assert from "node:assert/strict";
import { decodeKeeperRequest } from "./messages.ts";

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
