/**
 * Auditing a `run`/`exec` from the command line: the run's id and artifacts directory, and the records
 * written at start, launch, breach, end, or error. Flags are recorded by name (values only for flags
 * that carry no secret): `--env` values, for one, never reach the log.
 *
 * @module
 */
import { AuditLog, defaultArtifactsDir } from "../artifacts/mod.ts";
import { SpecterError } from "../errors.ts";
import type { Frame } from "../protocol/mod.ts";
import type { Session } from "../session/mod.ts";
import { fingerprintPlan } from "../sandbox/mod.ts";
import type { FlagValues } from "./flags.ts";

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

/** A run's audit context. */
export interface RunAudit {
  /** The run id (also the session id). */
  readonly runId: string;
  /** The artifacts directory. */
  readonly dir: string;
  /** The log. */
  readonly log: AuditLog;
}

/** Opens the audit log of a run and records its start (throws `E_IO` when it cannot be written). */
export function startRunAudit(
  values: FlagValues,
  command: readonly string[],
  kind: "run" | "exec" | "agent",
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
    flag_values: Object.fromEntries(
      RECORDED_VALUES.filter((name) => typeof values[name] === "string").map((name) => [name, values[name]]),
    ),
    acks: ACK_FLAGS.filter((name) => values[name] === true).map((name) => `--${name}`),
    ...(requested !== undefined && requested !== runId ? { requested_id: requested } : {}),
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

/** Records how `session` was launched. */
export function auditLaunch(audit: RunAudit, session: Session): void {
  const { launch } = session;
  // Only a session taken back by a restarted daemon has no plan; its start was audited by the first.
  if (launch.plan === null) return;
  const fingerprint = fingerprintPlan(launch.plan);
  audit.log.record("launch", {
    session_id: session.info.id,
    pid: session.pid,
    program_argv: [...session.argv],
    backend: launch.backend,
    policy: launch.policy,
    policy_sha256: fingerprint.policy_sha256,
    fingerprint,
    limits: launch.limits,
    // Which mechanism held each ceiling: the session's cgroup, a sampler (no usable cgroup), or an rlimit.
    enforced_by: launch.enforcedBy,
    timeout_ms: launch.timeoutMs,
    max_output_bytes: launch.maxOutputBytes,
  });
}

/** Records what in `frame` an auditor needs (breaches and the end). */
export function auditFrame(audit: RunAudit, frame: Frame): void {
  switch (frame.type) {
    case "capsule_kill":
      audit.log.record("breach", {
        reason: frame.reason,
        limit: frame.limit,
        value: frame.value ?? null,
        ...(frame.enforced_by === undefined ? {} : { enforced_by: frame.enforced_by }),
      });
      return;
    case "overflow":
      audit.log.record("breach", { reason: `overflow:${frame.reason}`, limit: frame.limit ?? null });
      return;
    case "exit":
      // Strict-write: protected names created during the run (reported; no kernel way to forbid them).
      if ((frame.protected_created?.length ?? 0) > 0 || frame.protected_unchecked !== undefined) {
        audit.log.record("protected_created", {
          paths: frame.protected_created ?? [],
          unchecked: frame.protected_unchecked ?? [],
        });
      }
      audit.log.record("end", {
        code: frame.code,
        signal: frame.signal,
        timed_out: frame.timed_out,
        duration_ms: frame.duration_ms,
        output_bytes: frame.output_bytes ?? null,
        ...(frame.stop === undefined ? {} : { stop: frame.stop }),
      });
      return;
    default:
      return;
  }
}

/** Records a failure that ended the run (before or after launch). */
export function auditError(audit: RunAudit, error: unknown): void {
  const failure = error instanceof SpecterError
    ? error.toJSON()
    : { code: "E_IO", message: String(error), details: {} };
  audit.log.record("error", { code: failure.code, message: failure.message, details: failure.details });
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
