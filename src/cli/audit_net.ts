/**
 * `specter audit net FILE|RUN_DIR [--json]`: the connections a run's programs made through the network
 * proxy of an allow-list policy, one line per `net` record of its audit log (time, decision, method,
 * host:port, the rule that allowed it or the reason it was refused, bytes each way, duration), then
 * totals. The chain is verified first, as `audit verify` does: a broken log is not summarised.
 *
 * The records are the proxy's, but their host, method and reason come from what a sandboxed program sent:
 * every string is printed with control and non-ASCII characters escaped, and clipped.
 *
 * @module
 */
import { z } from "zod";
import { AuditError } from "../errors.ts";
import { type ChainSummary, verifyChain } from "../artifacts/mod.ts";
import { netEventFields } from "../protocol/mod.ts";

// An audit record carries the chain's fields (prev, run_id…) beside the event's: loose, but every field of
// the `net` event (src/protocol/net.ts, the one definition) is checked.
const NetRecordSchema = z.looseObject({ ts: z.number(), event: z.literal("net"), ...netEventFields });

/** One connection as `audit net` reports it (`--json`: one object per line, `event: "net"`). */
export type NetConnection = z.infer<typeof NetRecordSchema> & { readonly record: number };

/** What `audit net` found in a log. */
export interface NetSummary {
  /** The chain, verified. */
  readonly chain: ChainSummary;
  /** Each `net` record, in log order. */
  readonly connections: readonly NetConnection[];
  /** The `net` records that do not have the expected fields: their record number and why. */
  readonly unreadable: readonly { readonly record: number; readonly problem: string }[];
}

/** The totals line (`--json`: `event: "totals"`). */
export interface NetTotals {
  readonly connections: number;
  readonly allowed: number;
  readonly refused: number;
  readonly unreadable: number;
  readonly bytes_up: number;
  readonly bytes_down: number;
}

/**
 * Verifies the chain of the log `bytes` and collects its `net` records. Throws `E_AUDIT_TAMPERED` when the
 * chain is broken (nothing is summarised from a log that was altered).
 */
export function readNetRecords(bytes: Uint8Array): NetSummary {
  let chain: ChainSummary;
  try {
    chain = verifyChain(bytes);
  } catch (error: unknown) {
    if (!(error instanceof AuditError)) throw error;
    throw new AuditError(
      "E_AUDIT_TAMPERED",
      `The audit log's chain is broken, so its connections are not summarised: ${error.message}`,
      { cause: error, details: error.details },
    );
  }
  const connections: NetConnection[] = [];
  const unreadable: { record: number; problem: string }[] = [];
  // The chain check decoded every line already: each is one JSON record.
  const lines = new TextDecoder().decode(bytes).split("\n").slice(0, chain.records);
  lines.forEach((line, i) => {
    const value = JSON.parse(line) as { event?: unknown };
    if (value.event !== "net") return;
    const parsed = NetRecordSchema.safeParse(value);
    if (parsed.success) connections.push({ ...parsed.data, record: i + 1 });
    else {
      const issue = parsed.error.issues[0]!;
      unreadable.push({ record: i + 1, problem: `field "${issue.path.join(".")}": ${issue.message}` });
    }
  });
  return { chain, connections, unreadable };
}

/** The totals of a summary. */
export function netTotals(summary: NetSummary): NetTotals {
  const { connections } = summary;
  return {
    connections: connections.length,
    allowed: connections.filter((c) => c.decision === "allowed").length,
    refused: connections.filter((c) => c.decision === "refused").length,
    unreadable: summary.unreadable.length,
    bytes_up: connections.reduce((sum, c) => sum + c.bytes_up, 0),
    bytes_down: connections.reduce((sum, c) => sum + c.bytes_down, 0),
  };
}

/** `text` safe for a terminal: printable ASCII kept, anything else as `\u{…}`, clipped to `max`. */
export function shown(text: string, max = 200): string {
  const clipped = text.length > max ? `${text.slice(0, max)}…` : text;
  return clipped.replace(/[^\x20-\x7e…]/gu, (ch) => `\\u{${ch.codePointAt(0)!.toString(16)}}`);
}

/** `host:port`, with an IPv6 address in brackets. */
function endpoint(host: string, port: number): string {
  return `${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
}

/** One connection as a line of text. */
export function connectionLine(c: NetConnection): string {
  const time = Number.isFinite(c.ts * 1000) && Math.abs(c.ts) < 8.64e12
    ? new Date(c.ts * 1000).toISOString()
    : String(c.ts);
  const why = c.decision === "allowed"
    ? `rule ${c.rule === null ? "(none)" : shown(c.rule)}`
    : `reason ${c.reason === null ? "(none)" : shown(c.reason)}`;
  const address = c.address === null ? "" : ` via ${shown(c.address, 64)}`;
  return `${time}  ${c.decision.padEnd(7)}  ${shown(c.method, 16).padEnd(7)}  ` +
    `${shown(endpoint(c.host, c.port))}${address}  ${why}  up ${c.bytes_up} B, down ${c.bytes_down} B, ` +
    `${Math.round(c.duration_ms)} ms`;
}

/** The totals as a line of text. */
export function totalsLine(totals: NetTotals): string {
  const unreadable = totals.unreadable === 0 ? "" : `, ${totals.unreadable} unreadable record(s)`;
  return `${totals.connections} connection(s): ${totals.allowed} allowed, ${totals.refused} refused` +
    `${unreadable}; ${totals.bytes_up} bytes up, ${totals.bytes_down} bytes down`;
}

/** The lines `audit net` prints for `summary` (`json`: NDJSON, connections then the totals). */
export function netLines(summary: NetSummary, json: boolean): string[] {
  const totals = netTotals(summary);
  if (json) {
    return [
      ...summary.connections.map((c) => JSON.stringify(c)),
      ...summary.unreadable.map((u) => JSON.stringify({ event: "unreadable", ...u })),
      JSON.stringify({ event: "totals", ...totals }),
    ];
  }
  return [
    ...summary.connections.map(connectionLine),
    ...summary.unreadable.map((u) => `record ${u.record}: an unreadable net record (${shown(u.problem)})`),
    totalsLine(totals),
  ];
}
