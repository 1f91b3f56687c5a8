/**
 * The network proxy's report of one connection (issue 26): what a sandboxed program asked the proxy for,
 * what the allow list decided, and how many bytes went each way. The proxy (`src/net/`) emits one
 * {@link NetEvent} per connection when it closes (a refusal at once); the run writes it to its audit log
 * (event `net`, these fields without `ts` and `event`) and sends it as a `net` frame.
 *
 * @module
 */
import { z } from "zod";

/** What the allow list decided: `allowed` (a rule matched, and an address it allows), or `refused`. */
export const NET_DECISIONS = ["allowed", "refused"] as const;

/** The fields a `net` event, audit record and frame share (everything but `ts` and `event`). */
export const netEventFields = {
  decision: z.enum(NET_DECISIONS).describe(
    "allowed: a rule matched the host and port (and an address it allows, for a name that resolved); reason " +
      "is then null, or says why no connection was made after all (the name did not resolve, the connect " +
      "failed, the proxy stopped); refused: no rule, only addresses the rule does not allow, a malformed " +
      "request or a limit",
  ),
  method: z.string().max(32).describe('The request method ("CONNECT", "GET", …); "" when none was read'),
  host: z.string().max(300).describe(
    'The host asked for, canonical (lower case, IPv6 without brackets); "" when none was read',
  ),
  port: z.number().int().min(0).max(65535).describe("The port asked for; 0 when none was read"),
  rule: z.string().nullable().describe("The allow-list rule that matched, as written; null when none"),
  reason: z.string().nullable().describe(
    "Why it was refused or failed (a short sentence); null for a connection that was made",
  ),
  address: z.string().nullable().describe(
    "The address the proxy connected to (or, refused by address, the first address the name resolved to); " +
      "null when there was none",
  ),
  bytes_up: z.number().int().nonnegative().describe("Bytes sent to the server (plain HTTP: with the head)"),
  bytes_down: z.number().int().nonnegative().describe("Bytes from the server passed to the program"),
  duration_ms: z.number().nonnegative().describe("From the connection's accept to its close"),
};

/** One connection through the proxy, reported when it closed. */
export const NetEventSchema = z.strictObject({
  ts: z.number().describe("Seconds since the epoch, when the connection closed"),
  event: z.literal("net"),
  ...netEventFields,
});

/** One connection through the proxy, reported when it closed. */
export type NetEvent = z.infer<typeof NetEventSchema>;

/** The fields of a `net` audit record: the event without `ts` and `event` (the audit writer stamps them). */
export const NetAuditFieldsSchema = z.strictObject(netEventFields);

/** The fields of a `net` audit record. */
export type NetAuditFields = z.infer<typeof NetAuditFieldsSchema>;

/** The fields of `event` for its audit record (`AuditLog.record("net", netAuditFields(event))`). */
export function netAuditFields(event: NetEvent): NetAuditFields {
  const { ts: _ts, event: _event, ...fields } = event;
  return fields;
}
