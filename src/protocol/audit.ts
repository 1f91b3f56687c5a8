/**
 * The audit record: one line of a run's `audit.ndjson`. It has one writer ({@link encodeAuditRecord})
 * and one reader ({@link decodeAuditRecord}), both through {@link AuditRecordSchema}. The hash chain
 * over the lines (`prev`) is computed and checked in `artifacts/`: hashing needs a digest this module,
 * which imports no runtime API, does not carry.
 *
 * @module
 */
import { z } from "zod";
import { decodeWith } from "./_decode.ts";
import type { DecodeProblem } from "./results.ts";

/**
 * The events an audit log records, in the order a run produces them. `resume`: a restarted daemon took
 * the session back from its keeper (the program ran on; nothing was launched again). The daemon's remote
 * listener keeps its own log (`STATE/remote/audit.ndjson`): `listen`, then per client `connect` (peer,
 * scope, token label), `refuse` (peer, code; not repeated while the peer is locked out) and `disconnect`
 * (the sessions it touched). `net`: one connection through the network proxy of an allow-list policy,
 * allowed or refused, written when it closes (`NetEventSchema`).
 */
export const AUDIT_EVENTS = [
  "start",
  "launch",
  "resume",
  "breach",
  "protected_created",
  "end",
  "error",
  "listen",
  "connect",
  "refuse",
  "disconnect",
  "net",
] as const;

/** An audit event name. */
export type AuditEvent = typeof AUDIT_EVENTS[number];

/** One audit record (`audit.ndjson` line). Events add their own fields. */
export const AuditRecordSchema = z.looseObject({
  ts: z.number().describe("Seconds since the epoch"),
  run_id: z.string(),
  event: z.enum(AUDIT_EVENTS),
  prev: z.string().regex(/^[0-9a-f]{64}$/).describe(
    "sha256 (hex) of the previous record's line without its newline; 64 zeros for the first record",
  ),
});

/** One audit record: the common fields and the event's own. */
export type AuditRecord = z.infer<typeof AuditRecordSchema>;

/**
 * The one writer of an audit record: validated, then one line of JSON (no newline) with `ts`, `run_id`
 * and `event` first, the event's fields next in their order, and `prev` last. The order is fixed here,
 * not by the schema (whose output puts its own keys first): the next record hashes these exact bytes.
 */
export function encodeAuditRecord(record: AuditRecord): string {
  const { ts, run_id, event, prev, ...fields } = AuditRecordSchema.parse(record);
  return JSON.stringify({ ts, run_id, event, ...fields, prev });
}

/**
 * The one reader of an audit record: one line without its newline. A problem is a sentence fragment
 * (`is not valid JSON`, `is not an audit record (…)`) for the caller to put after the record's number.
 */
export function decodeAuditRecord(line: string): { value: AuditRecord } | DecodeProblem {
  const decoded = decodeWith(AuditRecordSchema, line);
  if ("value" in decoded) return decoded;
  if ("json" in decoded) return { problem: "is not valid JSON" };
  return { problem: `is not an audit record (field "${decoded.field}": ${decoded.message})` };
}
