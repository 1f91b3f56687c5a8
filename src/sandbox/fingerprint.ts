/**
 * Fingerprints of a launch plan: what auditors compare between `specter policy render` and a run's
 * audit log. Environment values never enter a fingerprint (nor any printed argv): `--setenv NAME VALUE`
 * is rendered as `--setenv NAME <redacted>`.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { Policy } from "../policy/mod.ts";
import type { LaunchPlan } from "./launch_plan.ts";

/** The placeholder that replaces every environment value in a rendered argv. */
export const REDACTED = "<redacted>";

/** The launch argv with every `--setenv` value replaced by {@link REDACTED} (safe to print and log). */
export function redactedArgv(argv: readonly string[]): string[] {
  const out = [...argv];
  for (let i = 0; i < out.length - 2; i++) {
    if (out[i] === "--setenv") {
      out[i + 2] = REDACTED;
      i += 2;
    }
  }
  return out;
}

/** Hex sha256 of bytes or UTF-8 text. */
export function sha256(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** The sha256 of a policy's canonical JSON (keys in a fixed order, as `Policy` defines them). */
export function policySha256(policy: Policy): string {
  return sha256(JSON.stringify(policy));
}

/** What identifies a launch plan for an auditor. */
export interface PlanFingerprint {
  /** The backend. */
  readonly backend: string;
  /** sha256 of the redacted argv as JSON. */
  readonly argv_sha256: string;
  /** sha256 of each file passed on an fd (e.g. the seccomp BPF program), by purpose. */
  readonly files_sha256: Readonly<Record<string, string>>;
  /** sha256 of the policy's canonical JSON, or `null` when the backend enforces none. */
  readonly policy_sha256: string | null;
}

/** Fingerprints `plan`. */
export function fingerprintPlan(plan: LaunchPlan): PlanFingerprint {
  return {
    backend: plan.backend,
    argv_sha256: sha256(JSON.stringify(redactedArgv(plan.argv))),
    // A secret (shell integration's nonce) is fresh per launch and no auditor's business.
    files_sha256: Object.fromEntries(
      plan.files.filter((file) => file.secret !== true).map((file) => [file.purpose, sha256(file.content)]),
    ),
    policy_sha256: plan.policy === null ? null : policySha256(plan.policy),
  };
}
