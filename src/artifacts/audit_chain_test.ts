import assert from "node:assert/strict";
import { AuditError } from "../errors.ts";
import { AUDIT_GENESIS, recordHash, verifyChain } from "./audit_chain.ts";

const encode = (text: string) => new TextEncoder().encode(text);

function chain(count: number): string[] {
  const lines: string[] = [];
  let prev = AUDIT_GENESIS;
  for (let i = 0; i < count; i++) {
    const line = JSON.stringify({ ts: i, run_id: "r", event: "start", prev });
    lines.push(line);
    prev = recordHash(line);
  }
  return lines;
}

Deno.test("verifyChain: an empty log and a whole chain are intact; the last hash is returned", () => {
  assert.deepEqual(verifyChain(new Uint8Array()), { records: 0, last: AUDIT_GENESIS });
  const lines = chain(3);
  assert.deepEqual(verifyChain(encode(lines.join("\n") + "\n")), { records: 3, last: recordHash(lines[2]!) });
});

Deno.test("verifyChain: the first bad record is named (E_AUDIT_TAMPERED)", () => {
  const lines = chain(4);
  const cases: [string, number][] = [
    [[lines[0], lines[2], lines[1], lines[3]].join("\n") + "\n", 2],
    [[lines[1], lines[2]].join("\n") + "\n", 1],
    [lines.join("\n"), 4],
    [
      [...lines, '{"ts":1,"run_id":"r","event":"nope","prev":"' + recordHash(lines[3]!) + '"}'].join("\n") +
      "\n",
      5,
    ],
  ];
  for (const [text, record] of cases) {
    assert.throws(() => verifyChain(encode(text)), (error: unknown) => {
      assert.ok(error instanceof AuditError);
      assert.equal(error.code, "E_AUDIT_TAMPERED");
      assert.equal(error.details.record, record, error.message);
      return true;
    });
  }
});
