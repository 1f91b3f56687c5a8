/**
 * What of a session its audit log records: how it was launched (the plan's fingerprint, limits, the
 * mechanisms holding them), its breaches, the protected names it created, its end, and a failure that
 * ended it. One place for every host that audits sessions (`run`, `exec`, `agent`, the daemon); what the
 * caller's own start record holds (flags) is the caller's.
 *
 * @module
 */
import type { AuditLog } from "../artifacts/mod.ts";
import { SpecterError } from "../errors.ts";
import type { Frame } from "../protocol/mod.ts";
import { fingerprintPlan } from "../sandbox/mod.ts";
import type { Session } from "./session.ts";

/** An open audit log and the run it is for. */
export interface RunAudit {
  /** The run id (named in every record). */
  readonly runId: string;
  /** The artifacts directory the log is in. */
  readonly dir: string;
  /** The log. */
  readonly log: AuditLog;
}

/** Records how `session` was launched (with `extra` fields the host adds, such as a persistent layer). */
export function auditLaunch(audit: RunAudit, session: Session, extra: Record<string, unknown> = {}): void {
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
    ...extra,
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
