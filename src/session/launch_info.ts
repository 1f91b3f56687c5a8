/**
 * `LaunchInfo`: how a session was launched, as its audit log records it.
 *
 * @module
 */
import type { EnforcedBy, SessionCgroupPlacement } from "../ceilings/mod.ts";
import type { Policy } from "../policy/mod.ts";
import type { LaunchPlan, ProtectedWatch } from "../sandbox/mod.ts";
import type { ResolvedOptions } from "./options.ts";

/** How a session was launched: what an audit log records. Never holds environment values. */
export interface LaunchInfo {
  /** The sandbox backend. */
  readonly backend: string;
  /** The policy as enforced (paths resolved), or `null` for `none`/`external`. */
  readonly policy: Policy | null;
  /**
   * The launch plan (fingerprint it with `fingerprintPlan`, as the audit log does); null for a session a
   * restarted daemon took back (its launch was recorded when it started).
   */
  readonly plan: LaunchPlan | null;
  /** The effective resource ceilings (`null`: none of that kind). */
  readonly limits: ResolvedOptions["limits"];
  /** Effective wall-clock limit in ms, or `null`. */
  readonly timeoutMs: number | null;
  /** Effective output budget in bytes, or `null`. */
  readonly maxOutputBytes: number | null;
  /** Which mechanism enforces each resource ceiling (cgroup, sampler, rlimit; `null`: not set). */
  readonly enforcedBy: EnforcedBy;
  /** The session's cgroups, one per ceiling a cgroup holds (a daemon saves them for its successor). */
  readonly cgroups: readonly SessionCgroupPlacement[];
  /** Strict-write: walks the write roots again at exit for protected names the run created. */
  readonly protectedWatch?: ProtectedWatch | null;
}
