import assert from "node:assert/strict";
import { type AuditRecord, decodeAuditRecord, encodeAuditRecord } from "./audit.ts";
import { netAuditFields, type NetEvent } from "./net.ts";

const PREV = "ab".repeat(32);

Deno.test("encodeAuditRecord → decodeAuditRecord round-trips; ts, run_id, event first and prev last", () => {
  // Fields given in any order: the line's order is the writer's (the next record hashes these bytes).
  const record: AuditRecord = { prev: PREV, event: "end", code: 0, ts: 12.5, run_id: "r-1", stop: { x: 1 } };
  const line = encodeAuditRecord(record);
  assert.equal(line, `{"ts":12.5,"run_id":"r-1","event":"end","code":0,"stop":{"x":1},"prev":"${PREV}"}`);
  assert.deepEqual(decodeAuditRecord(line), { value: record });
});

Deno.test("encodeAuditRecord refuses a record its schema does not accept", () => {
  const bad = { ts: 1, run_id: "r", event: "start", prev: "0" } as AuditRecord;
  assert.throws(() => encodeAuditRecord(bad));
  assert.throws(() => encodeAuditRecord({ ts: 1, run_id: "r", event: "nope", prev: PREV } as never));
});

Deno.test("decodeAuditRecord: a malformed line is a problem naming the field", () => {
  assert.deepEqual(decodeAuditRecord("{not json"), { problem: "is not valid JSON" });
  const wrong = decodeAuditRecord(JSON.stringify({ ts: 1, run_id: "r", event: "nope", prev: PREV }));
  assert.ok("problem" in wrong);
  assert.match(wrong.problem, /^is not an audit record \(field "event": /);
  const array = decodeAuditRecord("[1]");
  assert.ok("problem" in array);
  assert.match(array.problem, /^is not an audit record \(field "\(document\)": /);
});

Deno.test("a net record carries exactly a NetEvent's fields: the writer refuses others, the reader names them", () => {
  const event: NetEvent = {
    ts: 3.5,
    event: "net",
    decision: "refused",
    method: "CONNECT",
    host: "example.com",
    port: 443,
    rule: null,
    reason: "no rule allows it",
    address: null,
    bytes_up: 0,
    bytes_down: 0,
    duration_ms: 1.25,
  };
  const record: AuditRecord = { ts: 4, run_id: "r", event: "net", ...netAuditFields(event), prev: PREV };
  const line = encodeAuditRecord(record);
  assert.ok(line.startsWith('{"ts":4,"run_id":"r","event":"net","decision":"refused","method":"CONNECT"'));
  assert.deepEqual(decodeAuditRecord(line), { value: record });
  assert.throws(() => encodeAuditRecord({ ...record, port: 70000 }));
  assert.throws(() => encodeAuditRecord({ ...record, extra: 1 }));
  const { bytes_up: _, ...missing } = record;
  assert.throws(() => encodeAuditRecord(missing as AuditRecord));
  const decoded = decodeAuditRecord(JSON.stringify({ ...record, decision: "maybe" }));
  assert.ok("problem" in decoded);
  assert.match(decoded.problem, /^is not an audit record \(field "decision": /);
  // Other events keep their own fields unchecked.
  assert.doesNotThrow(() => encodeAuditRecord({ ts: 1, run_id: "r", event: "end", port: "x", prev: PREV }));
});
