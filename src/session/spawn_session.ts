/**
 * `spawn()`: the library entry point that starts a session, inside its sandbox.
 *
 * @module
 */
import { PolicyError, SandboxError } from "../errors.ts";
import { DEFAULT_PRESET, hostHome, isValidatedPolicy, loadPolicy, type Policy } from "../policy/mod.ts";
import {
  type ExitWatcher,
  findSandboxInit,
  firstChildOf,
  libc,
  raiseOpenFileLimit,
  resolveProgram,
  type SpawnedChild,
  type SpawnRequest,
} from "../pty/mod.ts";
import { CastWriter } from "../recording/mod.ts";
import {
  attachForRoot,
  checkInterpreter,
  compileLaunchPlan,
  coverSecrets,
  findPrlimit,
  findSetsid,
  guardArtifacts,
  guardPolicyFile,
  hostFacts,
  idmapNamespace,
  type LaunchPlan,
  MountAttachments,
  programLaunchers,
  type RealizedPolicy,
  realizePolicy,
  type SandboxBackend,
} from "../sandbox/mod.ts";
import { dirname } from "node:path";
import {
  DEFAULTS,
  type ResolvedOptions,
  resolveOptions,
  type SandboxOption,
  type SpawnOptions,
} from "./options.ts";
import { nowSeconds } from "../clock.ts";
import { Session, type SessionHooks } from "./session.ts";
import { setUpShell } from "./shell_setup.ts";
import { knownShell } from "./shell_integration.ts";
import { specterStateDirs } from "./state_dirs.ts";
import { Ceilings, kernelEnforces, type SessionCgroupPlacement } from "../ceilings/mod.ts";
import { cgroupMode, launch, type Launched, ProcessTree } from "../launch/mod.ts";

let limitRaised = false;

/** RLIMIT_AS is this multiple of the memory budget (a backstop; see `prepare`). */
export const ADDRESS_SPACE_FACTOR = 4;
/** RLIMIT_CPU is the CPU budget plus this many seconds (a backstop; see `prepare`). */
export const CPU_BACKSTOP_SECONDS = 1;

/** RLIMIT_NPROC for a process budget: the budget plus a quarter, at least 8 more (a backstop). */
export function processBackstop(budget: number): number {
  return budget + Math.max(8, Math.ceil(budget / 4));
}

/** The backend `auto` means on this platform (throws `E_SANDBOX_UNAVAILABLE` elsewhere). */
export function platformBackend(os: string = Deno.build.os): "bwrap" | "seatbelt" {
  switch (os) {
    case "linux":
      return "bwrap";
    case "darwin":
      return "seatbelt";
    default:
      throw new SandboxError("E_SANDBOX_UNAVAILABLE", `No sandbox backend exists for "${os}"`, {
        details: { os, fix: "Run on Linux (bubblewrap) or macOS (Seatbelt)" },
      });
  }
}

/** The default sandbox: `auto` with the strict preset, for a run in `cwd`. */
export function defaultSandbox(cwd: string): SandboxOption {
  const policy = loadPolicy(DEFAULT_PRESET, {
    workspace: cwd,
    home: hostHome(),
    acks: { unsafeWrite: false, network: false },
  });
  return { mode: "auto", policy };
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

function prepare(
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

/**
 * Starts `options.argv` on a new terminal, inside the sandbox, and returns its {@link Session}. Frames
 * are buffered until consumed (`frames()` / `nextFrames()`); a session nobody reads pauses once
 * `bufferBytes` are queued.
 *
 * Throws `E_USAGE` for bad options, `E_POLICY_*` for a bad policy (also one that resolves through
 * symlinks to a forbidden place), `E_SANDBOX_UNAVAILABLE` when the sandbox cannot run (never a silent
 * fallback), `E_SPAWN_NOT_FOUND` / `E_SPAWN_NOT_EXECUTABLE` / `E_SPAWN_CWD` / `E_SPAWN` / `E_PTY_OPEN`
 * when the program cannot start, `E_RECORD` when the recording cannot be created.
 *
 * @example
 * ```ts
 * import { spawn } from "./src/mod.ts";
 * const session = spawn({ argv: ["python3", "-q"], promptRegex: [">>> $"] });
 * for await (const frame of session.frames()) {
 *   if (frame.type === "prompt") session.write("print(6 * 7)\r");
 *   if (frame.type === "stdout" && frame.data.includes("42")) await session.terminate();
 * }
 * ```
 */
export function spawn(options: SpawnOptions, host: SessionHost = {}): Session {
  const resolved = resolveOptions(options);
  if (!limitRaised) {
    raiseOpenFileLimit();
    limitRaised = true;
  }
  // Only macOS runs a Seatbelt plan: elsewhere no directory is made for a run that is refused below.
  const prepared = prepare(resolved, {
    ...(Deno.build.os === "darwin" ? { privateTmp: makePrivateTmp } : {}),
    shellDir: makeShellDir,
  });
  const { plan, program, options: effective, tmpDir } = prepared;
  // Root mode: bwrap binds clones of the opened paths, those the program reads or writes idmapped to the
  // sandbox's own uid (detached from the host again once bwrap has bound them: `opened.close()`).
  let opened = prepared.opened;
  if (opened !== null && plan.sandboxUid !== undefined) {
    try {
      opened = attachForRoot(
        opened,
        MountAttachments.create(plan.sandboxUid, idmapNamespace(plan.sandboxUid)),
        resolved.persistDir,
      );
    } catch (error: unknown) {
      opened.close();
      opened.watch?.close();
      if (tmpDir !== null) removeTmpDir(tmpDir);
      throw error;
    }
  }
  const cleanUp = () => {
    opened?.watch?.close();
    if (tmpDir !== null) removeTmpDir(tmpDir);
  };
  if (plan.backend === "seatbelt" && Deno.build.os !== "darwin") {
    opened?.close();
    cleanUp();
    // Seatbelt plans can be prepared and rendered anywhere (they are text); only macOS can run them.
    throw new SandboxError("E_SANDBOX_UNAVAILABLE", "The Seatbelt backend runs only on macOS", {
      details: {
        backend: plan.backend,
        os: Deno.build.os,
        fix: "On Linux use --sandbox bwrap (the default)",
      },
    });
  }
  const recorder = effective.record === null ? null : CastWriter.create(effective.record.path, {
    width: effective.cols,
    height: effective.rows,
    timestamp: Math.floor(nowSeconds()),
    env: { TERM: effective.env.TERM ?? "", ...(effective.env.SHELL ? { SHELL: effective.env.SHELL } : {}) },
    ...(effective.title === null ? {} : { title: effective.title }),
  }, { exclusive: effective.record.exclusive });
  let launched: Launched;
  try {
    launched = launch({
      plan,
      opened,
      cols: effective.cols,
      rows: effective.rows,
      inheritFds: effective.inheritFds,
      id: effective.id,
      limits: effective.limits,
      ...(effective.tty ? {} : { tty: false }),
      ...(host.spawner === undefined ? {} : { spawner: host.spawner }),
      ...(host.watcher === undefined ? {} : { watcher: host.watcher }),
      ...(host.cgroupOwner === undefined ? {} : { cgroupOwner: host.cgroupOwner }),
      ...(effective.netRelay === null ? {} : { netRelay: effective.netRelay }),
    });
  } catch (error: unknown) {
    recorder?.close();
    cleanUp();
    throw error;
  } finally {
    opened?.close(); // Passed on to the launched process (or not needed any more).
  }
  try {
    const session = new Session(
      launched,
      // Not `[program, ...rest]`: a spread grows the array to 17 slots, and the session keeps its argv.
      { ...effective, argv: [program].concat(effective.argv.slice(1)), cwd: plan.programCwd },
      recorder,
      {
        backend: plan.backend,
        policy: plan.policy,
        // Hashing is left to whoever audits (the CLI): a library host spawning thousands pays nothing.
        plan,
        limits: effective.limits,
        timeoutMs: effective.timeoutMs,
        maxOutputBytes: effective.maxOutputBytes,
        enforcedBy: launched.ceilings.enforcedBy,
        cgroups: launched.ceilings.cgroups,
        protectedWatch: opened?.watch ?? null,
      },
      host.hooks,
    );
    // The session reads its terminal now: let the program run.
    launched.release();
    const relay = launched.netRelay;
    if (relay !== null) void session.exited.then(() => relay.close());
    if (tmpDir !== null) void session.exited.then(() => removeTmpDir(tmpDir));
    return session;
  } catch (error: unknown) {
    launched.abort();
    recorder?.close();
    cleanUp();
    throw error;
  }
}

/** Who else takes part in a session: a daemon spawns through its keeper and logs every frame. */
export interface SessionHost {
  /** Starts the program (default: this process). */
  readonly spawner?: (request: SpawnRequest) => SpawnedChild;
  /** Reports the program's exit (default: this process's child watcher). */
  readonly watcher?: ExitWatcher;
  /** The session's hooks (a frame sink). */
  readonly hooks?: SessionHooks;
  /** The process the session's cgroups belong to (the daemon's keeper; default this process). */
  readonly cgroupOwner?: number;
}

/** A terminal whose program runs already, handed back by the keeper that spawned it. */
export interface AdoptedTerminal {
  readonly child: SpawnedChild;
  /** The backend it was launched under (`bwrap`: its direct child is the sandbox's launcher). */
  readonly backend: string;
  /** Reports the program's exit (the keeper reaps it). */
  readonly watcher: ExitWatcher;
  /**
   * Its cgroups as its launch made them (`LaunchInfo.cgroups`) and the process that owns them (the
   * keeper): watched again, with the sampler for the ceilings `options.limits` sets that no cgroup holds.
   */
  readonly cgroups?: { readonly placements: readonly SessionCgroupPlacement[]; readonly owner: number };
}

/**
 * Takes over a session another host ran (a daemon that was restarted): `options` as it was started
 * (argv, cwd, size, metadata, its timeout, output budget and ceilings as launched), `hooks.resume` with its
 * log, output offset and start time. Its ceilings are watched again: its cgroups (`terminal.cgroups`,
 * which the kernel enforced meanwhile) and the sampler for the rest, so a breach is a `capsule_kill` as
 * before; the wall clock keeps its deadline (counted from `resume.started`) and the output budget counts on
 * from the output offset; no sandbox is set up again, the program runs in the one it was started in.
 */
export function adopt(terminal: AdoptedTerminal, options: SpawnOptions, hooks: SessionHooks): Session {
  const resolved = resolveOptions(options);
  const { child, backend, watcher } = terminal;
  const sandboxed = backend === "bwrap";
  // The sandbox's init, held again: signals then go to the program (pid 2 inside), not to bwrap's group,
  // which the program (leading its own session on the terminal) is not in.
  const init = sandboxed ? findSandboxInit(child.pid) : null;
  const ceilings = Ceilings.resume(
    resolved.id,
    resolved.limits,
    sandboxed,
    terminal.cgroups?.placements ?? [],
    { pid: terminal.cgroups?.owner ?? Deno.pid, launched: child.pid },
    init?.handle.pid ?? (sandboxed ? firstChildOf(child.pid) : null),
  );
  const launched: Launched = {
    child,
    ceilings,
    backend,
    watcher,
    netRelay: null, // A keeper-held sandbox's relay, if any, is the keeper's (see docs/architecture.md).
    processTree: (later) =>
      new ProcessTree({ pid: child.pid, launcher: backend === "bwrap", init, ceilings, later }),
    release: () => {},
    abort: () => {
      libc().sym.kill(-child.pid, libc().table.signals.KILL);
    },
  };
  return new Session(
    launched,
    resolved,
    null,
    {
      backend,
      policy: null,
      plan: null,
      limits: resolved.limits,
      timeoutMs: resolved.timeoutMs,
      maxOutputBytes: resolved.maxOutputBytes,
      enforcedBy: ceilings.enforcedBy,
      cgroups: ceilings.cgroups,
      protectedWatch: null,
    },
    hooks,
  );
}

/** A private (0700) temp directory for one Seatbelt run, by its resolved path (`/var` is a symlink there). */
function makePrivateTmp(): string {
  return Deno.realPathSync(Deno.makeTempDirSync({ prefix: "specter-tmp-" }));
}

/** A private directory (0700) for shell integration's files of a run without a sandbox. */
function makeShellDir(): string {
  return Deno.realPathSync(Deno.makeTempDirSync({ prefix: "specter-shell-" }));
}

/**
 * Removes a run's temp directory after it ended. Whatever the program left there is removed without
 * following its symlinks (the directory was writable by it), best effort: a failure leaves a directory
 * in the system temp directory, which the OS cleans.
 */
function removeTmpDir(path: string): void {
  try {
    Deno.removeSync(path, { recursive: true });
  } catch {
    // Best effort, see above.
  }
}
