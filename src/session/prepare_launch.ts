/**
 * `prepareLaunch()`: everything `spawn` decides before starting anything (the sandbox, the environment,
 * the program's path, the realized policy, the rlimit backstops and the launch plan), also for
 * `specter policy render`, which prints that plan.
 *
 * @module
 */
import { PolicyError, SandboxError } from "../errors.ts";
import { hostHome, isValidatedPolicy, type Policy } from "../policy/mod.ts";
import { resolveProgram } from "../pty/mod.ts";
import {
  checkInterpreter,
  compileLaunchPlan,
  coverSecrets,
  findPrlimit,
  findSetsid,
  guardArtifacts,
  guardPolicyFile,
  hostFacts,
  type LaunchPlan,
  programLaunchers,
  type RealizedPolicy,
  realizePolicy,
  type SandboxBackend,
} from "../sandbox/mod.ts";
import { dirname } from "node:path";
import { DEFAULTS, type ResolvedOptions, resolveOptions, type SpawnOptions } from "./options.ts";
import { setUpShell } from "./shell_setup.ts";
import { knownShell } from "./shell_integration.ts";
import { specterStateDirs } from "./state_dirs.ts";
import { kernelEnforces } from "../ceilings/mod.ts";
import { cgroupMode } from "../launch/mod.ts";
import { defaultSandbox, platformBackend } from "./default_sandbox.ts";
import { removeTmpDir } from "./_run_dirs.ts";

/** RLIMIT_AS is this multiple of the memory budget (a backstop; see `prepare`). */
export const ADDRESS_SPACE_FACTOR = 4;
/** RLIMIT_CPU is the CPU budget plus this many seconds (a backstop; see `prepare`). */
export const CPU_BACKSTOP_SECONDS = 1;

/** RLIMIT_NPROC for a process budget: the budget plus a quarter, at least 8 more (a backstop). */
export function processBackstop(budget: number): number {
  return budget + Math.max(8, Math.ceil(budget / 4));
}

function min(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}

/** What a launch needs beyond the options: the plan, and the options with the policy's budgets applied. */
export interface PreparedLaunch {
  readonly plan: LaunchPlan;
  readonly program: string;
  readonly options: ResolvedOptions;
}

/**
 * Everything `spawn` decides before starting anything: the sandbox, the environment, the program's
 * path, the realized policy and the launch plan. `specter policy render` prints this plan, so what an
 * auditor reads is exactly what a run with the same options executes.
 */
export function prepareLaunch(options: SpawnOptions, launchOptions: PrepareOptions = {}): PreparedLaunch {
  const { opened, tmpDir: _, ...prepared } = prepare(resolveOptions(options), launchOptions);
  // The plan is plain data: the descriptors it names were opened to check and identify the paths, and
  // a launch opens its own.
  opened?.close();
  opened?.watch?.close();
  return prepared;
}

/** How {@link prepareLaunch} realises a plan beyond the spawn options. */
export interface PrepareOptions {
  /**
   * Seatbelt: creates the run's private temp directory (absolute, resolved through symlinks) and returns
   * its path; the profile makes it writable and the program gets it as `TMPDIR` (macOS has no tmpfs to
   * mount). `spawn` creates one per run under the system temp directory and removes it after `exit`.
   * Absent: none (a plan to render shows no temp directory; only `fs.write` is writable).
   */
  readonly privateTmp?: () => string;
  /**
   * Without a sandbox: makes a private directory for shell integration's files (`shellIntegration`),
   * removed after `exit`. Absent: none (bash then gets its marks through the environment).
   */
  readonly shellDir?: () => string;
}

/** {@link prepareLaunch}, keeping what `spawn` launches with: the opened policy and the run's temp directory. */
export function prepare(
  resolved: ResolvedOptions,
  launchOptions: PrepareOptions = {},
): PreparedLaunch & { opened: RealizedPolicy | null; tmpDir: string | null } {
  const sandbox = resolved.sandbox ?? defaultSandbox(resolved.cwd);
  const policy: Policy | null = "policy" in sandbox ? sandbox.policy : null;
  if (policy !== null && !isValidatedPolicy(policy)) {
    throw new PolicyError([{
      code: "E_POLICY_SCHEMA",
      field: "(policy)",
      message: "The policy was not produced by loadPolicy or checkPolicyDocument, so it is not trusted",
    }]);
  }
  const backend: SandboxBackend = sandbox.mode === "auto" ? platformBackend() : sandbox.mode;
  const sandboxed = backend !== "none" && backend !== "external";

  // Variables the policy passes through come from this process; explicit `env` options still win.
  // Inside a sandbox PATH is the standard one unless given: the caller's names host directories.
  const passed: Record<string, string> = {};
  for (const name of policy?.env ?? []) {
    const value = Deno.env.get(name);
    if (value !== undefined) passed[name] = value;
  }
  if (resolved.persistDir !== null && backend === "seatbelt") {
    throw new SandboxError("E_SANDBOX_UNAVAILABLE", "A persistent layer is not available under Seatbelt", {
      details: { backend, fix: "Run without --persist on macOS" },
    });
  }
  const env: Record<string, string> = {
    ...resolved.env,
    ...(sandboxed ? { PATH: DEFAULTS.path } : {}),
    ...passed,
    ...resolved.explicitEnv,
    // Without a sandbox the layer is the directory itself (under bwrap the plan sets HOME).
    ...(resolved.persistDir !== null && !sandboxed ? { HOME: resolved.persistDir } : {}),
  };
  const program = resolveProgram(resolved.argv[0]!, env.PATH, resolved.cwd);

  // The policy's budgets tighten the session's own limits (never loosen them).
  const budgets = policy?.budgets;
  const limits = {
    memoryBytes: min(resolved.limits.memoryBytes, budgets?.memory_bytes ?? null),
    cpuSeconds: min(resolved.limits.cpuSeconds, budgets?.cpu_seconds ?? null),
    processes: min(resolved.limits.processes, budgets?.processes ?? null),
    fileSizeBytes: min(resolved.limits.fileSizeBytes, budgets?.file_size_bytes ?? null),
  };
  const options: ResolvedOptions = {
    ...resolved,
    env,
    timeoutMs: min(resolved.timeoutMs, budgets?.wall_ms ?? null),
    maxOutputBytes: min(resolved.maxOutputBytes, budgets?.output_bytes ?? null),
    limits,
  };
  // Seatbelt cannot set rlimits (no prlimit on macOS): a process budget there has only its backstop
  // missing, the session's watcher still enforces it, so the presets' cap does not make them unusable.
  // Under bwrap with a pids cgroup the kernel caps the whole tree (RLIMIT_NPROC only counts per host uid),
  // so no launcher is spent on it.
  const noProcessRlimit = backend === "seatbelt" ||
    (backend === "bwrap" && kernelEnforces("processes", cgroupMode()));
  const backstops = noProcessRlimit ? { ...limits, processes: null } : limits;
  const anyLimit = Object.values(backstops).some((value) => value !== null);
  const rlimits = anyLimit
    ? {
      prlimit: findPrlimit(),
      // Programs reserve far more address space than they touch: RLIMIT_AS is only a backstop, the
      // budget itself is enforced on the tree's resident memory.
      ...(limits.memoryBytes === null ? {} : { addressSpace: limits.memoryBytes * ADDRESS_SPACE_FACTOR }),
      // CPU and processes: the watcher enforces the budget on the tree and reports capsule_kill; the
      // rlimits sit a little above as a per-process backstop (at the budget itself, the kernel would
      // kill or refuse first and the breach would go unreported).
      ...(limits.cpuSeconds === null ? {} : { cpuSeconds: limits.cpuSeconds + CPU_BACKSTOP_SECONDS }),
      ...(backstops.processes === null ? {} : { processes: processBackstop(backstops.processes) }),
      ...(limits.fileSizeBytes === null ? {} : { fileSize: limits.fileSizeBytes }),
    }
    : undefined;
  // On a terminal in a sandbox the program leads the terminal's session itself (see `ownSession`).
  const setsid = sandboxed && backend === "bwrap" && resolved.tty ? findSetsid() : null;
  const request = {
    program,
    args: resolved.argv.slice(1),
    argv0: resolved.argv[0]!,
    cwd: resolved.cwd,
    env,
    ...(rlimits === undefined ? {} : { rlimits }),
    ...(setsid === null ? {} : { ownSession: setsid }),
  };
  if (!sandboxed || policy === null) {
    const shell = setUpShell(request, options, backend, {
      ...(launchOptions.shellDir === undefined ? {} : { makeDir: launchOptions.shellDir }),
    });
    try {
      return {
        plan: compileLaunchPlan(policy, shell.request, backend, NO_HOST),
        program,
        options: shell.options,
        opened: null,
        tmpDir: shell.madeDir,
      };
    } catch (error: unknown) {
      if (shell.madeDir !== null) removeTmpDir(shell.madeDir);
      throw error;
    }
  }
  const strictWrite = "strictWrite" in sandbox && sandbox.strictWrite === true;
  checkInterpreter(program, policy); // A script's interpreter must be visible too (bwrap names the script).
  const realized = realizePolicy(policy, {
    cwd: resolved.cwd,
    home: hostHome(),
    strictWrite,
    programs: [...new Set([program, ...programLaunchers(request)])],
    ...(resolved.persistDir === null ? {} : { persist: resolved.persistDir }),
  });
  let tmpDir: string | null = null;
  try {
    // The run's own record is out of the program's reach (E_POLICY_ARTIFACTS_EXPOSED otherwise), and so
    // is Specter's own state (other sessions' nonces, homes and logs). A recording may be read back,
    // except an integrated shell's: it holds the shell's marks with their nonce.
    const integrated = resolved.shellIntegration && knownShell(program, request.args) !== null;
    const { hide } = guardArtifacts(realized, [
      ...(resolved.artifacts === null ? [] : [{ dir: resolved.artifacts }]),
      ...(resolved.record === null
        ? []
        : [{ dir: dirname(resolved.record.path), readable: !integrated, kind: "recording" as const }]),
      ...resolved.protectedDirs.map((dir) => ({ dir })),
      // The proxy's socket: reached only through the relay, which checks nothing itself.
      ...(resolved.netRelay === null ? [] : [{ dir: dirname(resolved.netRelay.socketPath) }]),
      ...specterStateDirs().map((dir) => ({ dir, kind: "state" as const })),
    ], { canHide: backend === "bwrap" });
    // A policy file its own write grants contain could be rewritten for the next run (E_POLICY_SELF_WRITABLE).
    guardPolicyFile(realized, policy.source);
    const host = backend === "bwrap" ? hostFacts(policy.network === "on") : NO_HOST;
    if (backend === "seatbelt" && launchOptions.privateTmp !== undefined) tmpDir = launchOptions.privateTmp();
    const shell = setUpShell({ ...request, cwd: realized.cwd }, options, backend, { tmpDir });
    const plan = compileLaunchPlan(realized.policy, shell.request, backend, host, {
      protect: realized.protect,
      persistProtect: realized.persistProtect,
      opened: realized.opened,
      // Secrets a grant only contains (~/.ssh under a working directory of ~): covered, never shown.
      ...coverSecrets(realized.policy, hide, hostHome(), backend === "bwrap" || backend === "seatbelt"),
      ...(tmpDir === null ? {} : { tmpDir }),
      ...(resolved.persistDir === null ? {} : { persist: resolved.persistDir }),
    });
    return { plan, program, options: shell.options, opened: realized, tmpDir };
  } catch (error: unknown) {
    realized.close();
    realized.watch?.close();
    if (tmpDir !== null) removeTmpDir(tmpDir);
    throw error;
  }
}

// Backends other than bwrap read no host facts.
const NO_HOST = {
  bwrap: "",
  mergedUsr: true,
  seccompFilter: new Uint8Array(),
  rootLauncher: null,
} as const;
