/**
 * The audit log's hash chain: every record carries `prev`, the sha256 (hex) of the exact bytes of the
 * record before it (its line without the newline); the first record's `prev` is {@link AUDIT_GENESIS}.
 * Editing, removing, reordering or inserting a record breaks the chain at the record after it; a torn
 * last line has no newline. Rewriting the whole tail with fresh hashes keeps the chain intact, so the last
 * hash (printed by `specter audit verify`) is what to pin elsewhere (`--expect`).
 *
 * @module
 */
import { createHash } from "node:crypto";
import { AuditError } from "../errors.ts";
import { decodeAuditRecord } from "../protocol/mod.ts";

/** `prev` of the first record of a log. */
export const AUDIT_GENESIS = "0".repeat(64);

/** The largest audit log `audit verify` reads (and a run continues): 64 MiB. */
export const AUDIT_MAX_BYTES = 64 * 1024 * 1024;

/** The hash the next record's `prev` carries after `line` (without its newline). */
export function recordHash(line: string): string {
  return createHash("sha256").update(line).digest("hex");
}

/** A verified log. */
export interface ChainSummary {
  /** Records in the log. */
  readonly records: number;
  /** The hash of the last record (the genesis value for an empty log): pin it to detect a rewritten tail. */
  readonly last: string;
}

function broken(record: number, why: string): AuditError {
  return new AuditError("E_AUDIT_TAMPERED", `Audit record ${record} ${why}`, { details: { record } });
}

/**
 * Verifies the chain of a whole audit log's bytes. Throws `AuditError` `E_AUDIT_TAMPERED` naming the
 * first bad record (1-based): not UTF-8, not a JSON record, a `prev` that is not the hash of the record
 * before, or a last line without its newline.
 */
export function verifyChain(bytes: Uint8Array): ChainSummary {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw broken(1, "or a later one is not valid UTF-8");
  }
  if (text === "") return { records: 0, last: AUDIT_GENESIS };
  const lines = text.split("\n");
  const torn = lines.pop() !== ""; // A whole log ends in a newline: the last element is empty.
  let expected = AUDIT_GENESIS;
  for (const [i, line] of lines.entries()) {
    const decoded = decodeAuditRecord(line);
    if ("problem" in decoded) throw broken(i + 1, decoded.problem);
    if (decoded.value.prev !== expected) {
      throw broken(
        i + 1,
        i === 0
          ? "does not start the chain (records before it were removed or it was edited)"
          : `does not follow record ${i} (a record was edited, removed, reordered or inserted)`,
      );
    }
    expected = recordHash(line);
  }
  if (torn) throw broken(lines.length + 1, "is torn: the log does not end in a newline");
  return { records: lines.length, last: expected };
}

/** The `prev` a record appended to a log holding `bytes` carries (verifies the log first). */
export function nextPrev(bytes: Uint8Array): string {
  return verifyChain(bytes).last;
}
