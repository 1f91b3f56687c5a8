/**
 * `specter audit verify FILE|RUN_DIR [--expect HASH] [--json]`: checks an audit log's hash chain;
 * `specter audit net …` summarises its network connections after the same check (`audit_net.ts`).
 *
 * Exit 0: intact (prints the record count and the last record's hash, to pin elsewhere). Exit 1:
 * `E_AUDIT_TAMPERED`, naming the first bad record (edited, removed, reordered, inserted, torn) or a last
 * hash that is not `--expect`. Exit 2: bad usage, or a path that is not a bounded regular file.
 *
 * @module
 */
import { join } from "node:path";
import { AuditError, FileError, UsageError } from "../errors.ts";
import { AUDIT_FILE, AUDIT_MAX_BYTES, type ChainSummary, verifyChain } from "../artifacts/mod.ts";
import { closeFd, openDirectory, readFileBeneath, readRegularFile } from "../fsafe/mod.ts";
import { parseFlags } from "./flags.ts";
import { type CommandDoc, commandOptions, type FlagTable, HELP_FLAG } from "./flag_table.ts";
import { netLines, readNetRecords } from "./audit_net.ts";

const AUDIT_FLAGS = {
  expect: {
    type: "string",
    value: "HASH",
    description: "The sha256 (lowercase hex) the chain must end with, pinned from an earlier verify: " +
      "detects a rewritten tail",
  },
  json: {
    type: "boolean",
    description: "verify: print {ok: true, file, records, last}, or {ok: false, file, code, message, " +
      "record}; net: one JSON object per connection (event net), then {event: totals, …}",
  },
  ...HELP_FLAG,
} as const satisfies FlagTable;

/** `specter audit`'s help. */
export const AUDIT_DOC: CommandDoc = {
  name: "audit",
  usage: [
    "specter audit verify FILE|RUN_DIR [--expect HASH] [--json]",
    "specter audit net FILE|RUN_DIR [--expect HASH] [--json]",
  ],
  about:
    `Checks the hash chain of an audit log (audit.ndjson, or the one in a run's artifacts directory): every
record carries the sha256 of the record before it. Prints the number of records and the last record's
hash; pin that hash elsewhere and pass it as --expect to detect a rewritten tail.
Exits 0 when intact, 1 (E_AUDIT_TAMPERED) naming the first bad record (edited, removed, reordered,
inserted, torn last line) or a last hash other than --expect, 2 for bad usage or a path that is not a
regular file of at most 64 MiB.
  net      After the same check, the run's connections through the network proxy (an allow-list
           policy): one line each (time, allowed or refused, method, host:port, the rule or the reason,
           bytes up and down, duration), then the totals. A broken chain is not summarised (exit 1).`,
  groups: [{ title: "Audit flags", flags: AUDIT_FLAGS }],
};

const LIMITS = { maxBytes: AUDIT_MAX_BYTES, what: "audit log" } as const;

/** Reads the log at `path`: the file itself, or `audit.ndjson` beneath a run directory (no symlink). */
function readLog(path: string): { file: string; bytes: Uint8Array } {
  let dir: number;
  try {
    dir = openDirectory(path);
  } catch (error: unknown) {
    if (error instanceof FileError && error.code === "E_FILE_TYPE") {
      return { file: path, bytes: readRegularFile(path, LIMITS) };
    }
    if (error instanceof FileError && error.code === "E_PATH_NOT_FOUND") {
      throw new FileError("E_PATH_NOT_FOUND", `The audit log or run directory "${path}" does not exist`, {
        cause: error,
        details: { path },
      });
    }
    throw error;
  }
  try {
    return { file: join(path, AUDIT_FILE), bytes: readFileBeneath(dir, AUDIT_FILE, LIMITS) };
  } finally {
    closeFd(dir);
  }
}

/** Runs `specter audit …`; returns the exit code (a broken chain throws `E_AUDIT_TAMPERED`). */
export function auditCommand(args: readonly string[], out: (text: string) => void): number {
  const { values, positionals } = parseFlags(args, commandOptions(AUDIT_DOC));
  const sub = positionals[0];
  if (sub !== "verify" && sub !== "net") {
    throw new UsageError(
      `Unknown audit command "${positionals.join(" ").slice(0, 80)}" (try: specter audit verify FILE, ` +
        "specter audit net FILE)",
    );
  }
  if (positionals.length !== 2) {
    throw new UsageError(`Expected one audit log or run directory (specter audit ${sub} FILE|RUN_DIR)`);
  }
  const expect = values.expect;
  if (expect !== undefined && (typeof expect !== "string" || !/^[0-9a-f]{64}$/.test(expect))) {
    throw new UsageError(
      `Flag "--expect" must be a sha256 in lowercase hex, got "${String(expect).slice(0, 80)}"`,
    );
  }
  const { file, bytes } = readLog(positionals[1]!);
  if (sub === "net") {
    const found = readNetRecords(bytes);
    if (expect !== undefined && found.chain.last !== expect) {
      throw new AuditError(
        "E_AUDIT_TAMPERED",
        `Audit record ${found.chain.records} ends the chain with "${found.chain.last}", not the expected ` +
          `"${expect}": its connections are not summarised`,
        { details: { record: found.chain.records } },
      );
    }
    for (const line of netLines(found, values.json === true)) out(line);
    return 0;
  }
  let summary: ChainSummary;
  try {
    summary = verifyChain(bytes);
    if (expect !== undefined && summary.last !== expect) {
      throw new AuditError(
        "E_AUDIT_TAMPERED",
        `Audit record ${summary.records} ends the chain with "${summary.last}", not the expected "${expect}"`,
        { details: { record: summary.records } },
      );
    }
  } catch (error: unknown) {
    if (error instanceof AuditError && values.json === true) {
      out(JSON.stringify({ ok: false, file, code: error.code, message: error.message, ...error.details }));
    }
    throw error;
  }
  if (values.json === true) {
    out(JSON.stringify({ ok: true, file, records: summary.records, last: summary.last }));
  } else {
    out(`${file}: intact, ${summary.records} record(s), last sha256 ${summary.last}`);
  }
  return 0;
}
