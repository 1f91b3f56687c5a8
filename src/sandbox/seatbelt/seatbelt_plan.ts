/**
 * The Seatbelt launch plan: `/usr/bin/sandbox-exec -p PROFILE program args…`.
 *
 * @module
 */
import { SandboxError } from "../../errors.ts";
import type { Policy } from "../../policy/mod.ts";
import type { HostFacts, LaunchPlan, LaunchRequest } from "../launch_plan.ts";
import { type SeatbeltOptions, seatbeltProfile } from "./profile.ts";
import { netProxyOf, withProxyEnv } from "../net_proxy.ts";

/** The launcher, by absolute path: a `sandbox-exec` earlier on `PATH` must never be the one that runs. */
export const SANDBOX_EXEC = "/usr/bin/sandbox-exec";

/** The rlimits a request asks for, by name; empty when none. */
function requestedRlimits(request: LaunchRequest): string[] {
  const limits = request.rlimits;
  if (limits === undefined) return [];
  return (["addressSpace", "cpuSeconds", "processes", "fileSize"] as const).filter((name) =>
    limits[name] !== undefined
  );
}

/**
 * Builds the Seatbelt plan. Pure: nothing is checked on the host here (that `sandbox-exec` exists, i.e.
 * that this is macOS, is decided at spawn time). `host` is unused: Seatbelt needs none of bubblewrap's
 * host facts. The process runs in `request.cwd` with `request.env` (plus `TMPDIR` when
 * `options.tmpDir` is given); `sandbox-exec` passes the program its own path as `argv[0]`.
 *
 * Throws `E_SANDBOX_UNAVAILABLE` when the request asks for rlimits: they are set by util-linux
 * `prlimit`, which macOS lacks, and a run is never started weaker than asked. Throws `E_SANDBOX_START`
 * for a path a profile cannot hold (see {@link seatbeltProfile}).
 */
export function seatbeltPlan(
  policy: Policy,
  request: LaunchRequest,
  _host: HostFacts,
  options: SeatbeltOptions = {},
): LaunchPlan {
  const rlimits = requestedRlimits(request);
  if (rlimits.length > 0) {
    throw new SandboxError("E_SANDBOX_UNAVAILABLE", "The Seatbelt backend cannot set rlimits yet", {
      details: { backend: "seatbelt", rlimits, fix: "Drop the resource budgets, or run on Linux (bwrap)" },
    });
  }
  const profile = seatbeltProfile(policy, request, options);
  const netProxy = netProxyOf(policy);
  const env = withProxyEnv(request.env, netProxy);
  return {
    backend: "seatbelt",
    // The program path is absolute (checked by the profile), so sandbox-exec's getopt stops there and
    // never reads the program's own arguments as its options.
    argv: [SANDBOX_EXEC, "-p", profile, request.program, ...request.args],
    argv0: SANDBOX_EXEC,
    env: options.tmpDir === undefined ? env : { ...env, TMPDIR: options.tmpDir },
    cwd: request.cwd,
    programCwd: request.cwd,
    files: [...(request.passFiles ?? [])],
    descriptors: [],
    gate: null,
    policy,
    netProxy,
  };
}
