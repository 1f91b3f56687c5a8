/**
 * Auditing a `run`/`exec` from the command line: the run's id and artifacts directory, and the records
 * written at start, launch, breach, end, or error. Flags are recorded by name (values only for flags
 * that carry no secret): `--env` values, for one, never reach the log.
 *
 * @module
 */
import { AuditLog, defaultArtifactsDir } from "../artifacts/mod.ts";
import type { Frame } from "../protocol/mod.ts";
import type { RunAudit } from "../session/mod.ts";
import type { FlagValues } from "./flags.ts";

export { auditError, auditFrame, auditLaunch, type RunAudit } from "../session/mod.ts";

/** Flags whose values are recorded; every other flag is recorded by name only. */
const RECORDED_VALUES = [
  "sandbox",
  "policy",
  "sandbox-profile",
  "cwd",
  "timeout",
  "max-output",
  "max-memory",
  "max-cpu",
  "max-procs",
  "max-file-size",
] as const;

/** Repeatable flags whose values are recorded as lists (network rules are no secret). */
const RECORDED_LISTS = ["allow-net"] as const;

/** Acknowledgement and unsafe flags, listed separately for auditors. */
const ACK_FLAGS = [
  "ack-unsafe-write",
  "ack-network",
  "ack-host-sockets",
  "ack-external-sandbox",
  "ack-no-network-enforcement",
  "unsafe-no-sandbox",
  "strict-write",
] as const;

/** Opens the audit log of a run and records its start (throws `E_IO` when it cannot be written). */
export function startRunAudit(
  values: FlagValues,
  command: readonly string[],
  kind: "run" | "exec" | "agent" | "daemon",
  extra: Record<string, unknown> = {},
): RunAudit {
  const requested = typeof values.id === "string" ? values.id : undefined;
  // The id names a directory: anything but a plain name gets a fresh id (the requested one is recorded).
  const runId = requested !== undefined && /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(requested)
    ? requested
    : crypto.randomUUID();
  const dir = typeof values.artifacts === "string" ? values.artifacts : defaultArtifactsDir(runId);
  const log = AuditLog.open(dir, runId);
  const flags = Object.keys(values).filter((name) => values[name] !== undefined && values[name] !== false)
    .sort();
  log.record("start", {
    command: kind,
    argv: [...command],
    cwd: typeof values.cwd === "string" ? values.cwd : Deno.cwd(),
    flags,
    flag_values: Object.fromEntries([
      ...RECORDED_VALUES.filter((name) => typeof values[name] === "string").map((
        name,
      ) => [name, values[name]]),
      ...RECORDED_LISTS.filter((name) => Array.isArray(values[name])).map((name) => [name, values[name]]),
    ]),
    acks: ACK_FLAGS.filter((name) => values[name] === true).map((name) => `--${name}`),
    ...(requested !== undefined && requested !== runId ? { requested_id: requested } : {}),
    ...extra,
  });
  // A run whose start cannot be recorded does not start: an audited run never goes unaudited.
  const failure = log.failure;
  if (failure !== null) {
    log.close();
    throw failure;
  }
  return { runId, dir, log };
}

/**
 * What Specter failed to keep of a run that went on (the audit log or the recording stopped, e.g. on a
 * full disk): said on stderr; the exit code stays the program's, except that a success becomes 125 (a run
 * that lost its record does not pass a CI gate).
 */
export function lostRecords(
  audit: RunAudit,
  recordError: { code: string; message: string } | null,
  exitCode: number,
  warn: (text: string) => void,
): number {
  const lost = [audit.log.failure, recordError].filter((e) => e !== null);
  for (const e of lost) warn(`specter: ${e.code}: ${e.message}`);
  return lost.length > 0 && exitCode === 0 ? 125 : exitCode;
}

/** Warns on stderr about protected names a strict-write run created (or could not check after it). */
export function warnProtected(frame: Frame, warn: (text: string) => void): void {
  if (frame.type !== "exit") return;
  const created = frame.protected_created ?? [];
  if (created.length > 0) {
    const shown = created.slice(0, 20).map((path) => JSON.stringify(path)).join(", ");
    const more = created.length > 20 ? ` and ${created.length - 20} more` : "";
    warn(`specter: warning: the program created protected names (strict-write): ${shown}${more}`);
  }
  for (const why of frame.protected_unchecked ?? []) warn(`specter: warning: ${why}`);
}
