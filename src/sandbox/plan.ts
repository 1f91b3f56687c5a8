/**
 * Launch plans: the pure step `compileLaunchPlan(policy, request, backend, host) → LaunchPlan`.
 *
 * A plan is a plain value (argv, env, cwd, files to pass as fds) that tests and auditors can print and
 * hash. Nothing here touches the system: facts about the host come in as {@link HostFacts}.
 *
 * @module
 */
import { SandboxError } from "../errors.ts";
import type { Policy } from "../policy/mod.ts";
import { bwrapPlan } from "./bwrap.ts";
import {
  type HostFacts,
  type LaunchPlan,
  type LaunchRequest,
  type PlanOptions,
  programCommand,
  type SandboxBackend,
} from "./launch_plan.ts";
import { seatbeltPlan } from "./seatbelt/seatbelt_plan.ts";

export {
  DATA_ROOT,
  type DataFile,
  type HostFacts,
  type LaunchPlan,
  type LaunchRequest,
  type OpenedFacts,
  type PlanCopy,
  type PlanDescriptor,
  type PlanFile,
  type PlanGate,
  type PlanOptions,
  programCommand,
  programLaunchers,
  type Rlimits,
  SANDBOX_BACKENDS,
  type SandboxBackend,
} from "./launch_plan.ts";

/**
 * Compiles a launch plan. `policy` is required by enforcing backends (`E_SANDBOX_START` without one)
 * and ignored by `none`/`external`. Pure on every platform: a Seatbelt plan can be compiled and rendered
 * on Linux; `spawn` refuses to run it anywhere but macOS.
 */
export function compileLaunchPlan(
  policy: Policy | null,
  request: LaunchRequest,
  backend: SandboxBackend,
  host: HostFacts,
  options: PlanOptions = {},
): LaunchPlan {
  switch (backend) {
    case "bwrap":
      if (policy === null) throw new SandboxError("E_SANDBOX_START", "The bwrap backend needs a policy");
      return bwrapPlan(policy, request, host, options);
    case "seatbelt":
      // Pure, like bwrap: whether sandbox-exec exists (macOS) is decided at spawn time, not here.
      if (policy === null) throw new SandboxError("E_SANDBOX_START", "The Seatbelt backend needs a policy");
      return seatbeltPlan(policy, request, host, options);
    case "external":
    case "none":
      return {
        backend,
        argv: programCommand(request),
        argv0: request.argv0 ?? request.program,
        env: request.env,
        cwd: request.cwd,
        programCwd: request.cwd,
        files: [...(request.passFiles ?? [])],
        descriptors: [],
        gate: null,
        policy: null,
        netProxy: null,
      };
    default: {
      const never: never = backend;
      throw new SandboxError("E_SANDBOX_UNAVAILABLE", `Unknown sandbox backend "${String(never)}"`);
    }
  }
}
