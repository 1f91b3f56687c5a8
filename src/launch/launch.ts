/**
 * `launch()`: turns a {@link LaunchPlan} into a running process on a new terminal. The last step of a
 * launch, which flows one way: request → host facts → plan (`sandbox/`) → realise (the policy's paths
 * opened by descriptor) → **launch** (this module) → session.
 *
 * Under bwrap the launcher reports its sandbox and blocks at a gate: the session's cgroup is joined and
 * the sandbox's mounts are checked against the plan while it waits, and the program runs only once the
 * caller {@link Launched.release}s it (when its session reads the terminal). Every failure before that
 * kills the launcher, so nothing runs unobserved.
 *
 * @module
 */
import { SandboxError } from "../errors.ts";
import {
  closeChildEnds,
  closeGate,
  closeQuietly,
  contentFd,
  type ExitWatcher,
  type GatePipes,
  holdSubreaper,
  type InheritedFd,
  openGate,
  releaseGate,
  type SandboxInit,
  type SpawnedChild,
  spawnOnPty,
  type SpawnRequest,
} from "../pty/mod.ts";
import type { LaunchPlan, RealizedPolicy } from "../sandbox/mod.ts";
import { reopenForReading } from "../fsafe/mod.ts";
import { type CeilingLimits, Ceilings, type CgroupMode } from "../ceilings/mod.ts";
import { killHelper, passGate, setupFailure } from "./_sandbox_gate.ts";
import { ProcessTree, type ProcessTreeOptions } from "./process_tree.ts";
import { type NetRelay, type NetRelayRequest, planWantsProxy, startNetRelay } from "./net_bridge.ts";

/**
 * `SPECTER_CGROUPS=off` keeps sessions out of cgroups (to exercise the sampling fallback); the audit
 * log's `enforced_by` records it, so the weaker mechanism is never silent.
 */
export function cgroupMode(): CgroupMode {
  return Deno.env.get("SPECTER_CGROUPS") === "off" ? "off" : "auto";
}

/** What {@link launch} starts. */
export interface LaunchRequest {
  /** The plan (its `descriptors` name paths `opened` holds). */
  readonly plan: LaunchPlan;
  /** The realised policy whose opened descriptors the plan's binds use (`null`: no sandbox paths). */
  readonly opened: RealizedPolicy | null;
  /** The terminal's size. */
  readonly cols: number;
  readonly rows: number;
  /** Descriptors the caller passes on to the launched process, besides the plan's own. */
  readonly inheritFds: readonly InheritedFd[];
  /** The session id (names its cgroup). */
  readonly id: string;
  /** The ceilings its cgroup enforces. */
  readonly limits: CeilingLimits;
  /** False: the program runs without a terminal, on a socket (`SpawnRequest.tty`). Default true. */
  readonly tty?: boolean;
  /**
   * Who starts the process (default: this process, {@link spawnOnPty}). The daemon's keeper spawns its
   * sessions, so that they outlive the daemon; it then reports their exit through `watcher`.
   */
  readonly spawner?: (request: SpawnRequest) => SpawnedChild;
  /** Tells the session its program ended (default: this process's child watcher). */
  readonly watcher?: ExitWatcher;
  /**
   * The process whose life the session's cgroups belong to (default: this one). A stale sweep by any
   * Specter process empties the cgroups of an owner that is gone, so a daemon's sessions name their keeper,
   * which holds them across the daemon's restarts.
   */
  readonly cgroupOwner?: number;
  /**
   * A network allow list's bridge: the relay to start in the sandbox's network namespace before the
   * program runs (`net_bridge.ts`). Only a bwrap plan (with its gate) can have one.
   */
  readonly netRelay?: NetRelayRequest | null;
}

/** A launched process, held at the gate until {@link release} (see the module documentation). */
export interface Launched {
  /** The direct child (the program, or the sandbox's launcher) and the terminal's master side. */
  readonly child: SpawnedChild;
  /** The session's ceilings (a cgroup where the host allows, else a sampler). */
  readonly ceilings: Ceilings;
  /** The backend the plan is for (what frames and audit logs name). */
  readonly backend: string;
  /** Tells the session its program ended (absent: this process's child watcher). */
  readonly watcher?: ExitWatcher;
  /** The controls of its processes, on the session's timers. */
  processTree(later: ProcessTreeOptions["later"]): ProcessTree;
  /** The sandbox's network relay (a network allow list), ended with the session or at {@link abort}. */
  readonly netRelay: NetRelay | null;
  /** Lets the program run. */
  release(): void;
  /** Kills what was launched (its session could not be created) and frees what it held. */
  abort(): void;
}

/**
 * Starts `request.plan` on a new terminal. Throws `E_SPAWN*` / `E_PTY_OPEN` when the program cannot
 * start, `E_SANDBOX_START` when the sandbox's setup failed (with bwrap's own words) or its cgroup cannot
 * be joined, `E_SANDBOX_MOUNTS` when its mounts differ from the plan; nothing is left running then.
 */
export function launch(request: LaunchRequest): Launched {
  const { plan, opened } = request;
  const passed: number[] = [];
  if (planWantsProxy(plan) && plan.backend === "bwrap" && (request.netRelay ?? null) === null) {
    // An allow list's sandbox has no way out but the relay: without one it would run, but never connect.
    throw new SandboxError(
      "E_SANDBOX_NETWORK",
      "The plan has a network allow list but no proxy was started for it",
      {
        details: { fix: "Start the run's proxy and pass its socket (SpawnOptions.netRelay)" },
      },
    );
  }
  if ((request.netRelay ?? null) !== null && plan.gate === null) {
    // Never a silent fallback: without bwrap's gate there is no namespace to bridge into.
    throw new SandboxError("E_SANDBOX_NETWORK", "A network allow list needs the bwrap sandbox", {
      details: { backend: plan.backend },
    });
  }
  const gate: GatePipes | null = plan.gate === null ? null : openGate();
  let netRelay: NetRelay | null = null;
  let ceilings: Ceilings | null = null;
  let launched = false;
  // Before the launcher can exit: its sandbox's init must be orphaned to us, not to the host's init.
  const releaseSubreaper = plan.backend === "bwrap" ? holdSubreaper() : undefined;
  try {
    for (const file of plan.files) passed.push(contentFd(file.content));
    // An exec-only copy's content: the opened program itself, read by bwrap to its end.
    const copyFds = (plan.copies ?? []).map(({ path, target }) => {
      const fd = opened?.opened.get(path)?.fd;
      if (fd === undefined) throw new SandboxError("E_SANDBOX_START", `"${path}" was not opened`);
      const readable = reopenForReading(fd);
      passed.push(readable);
      return { fd: readable, target };
    });
    // A path bound twice (a workspace both read and written) is one opened fd dup2'ed to two targets.
    const descriptorFds = plan.descriptors.map(({ path, target }) => {
      const fd = opened?.opened.get(path)?.fd;
      if (fd === undefined) throw new SandboxError("E_SANDBOX_START", `"${path}" was not opened`);
      return { fd, target };
    });
    const child = (request.spawner ?? spawnOnPty)({
      argv: plan.argv,
      argv0: plan.argv0,
      env: plan.env,
      cwd: plan.cwd,
      cols: request.cols,
      rows: request.rows,
      ...(request.tty === false ? { tty: false } : {}),
      ...(plan.programTakesTerminal === true ? { controllingTerminal: false } : {}),
      inheritFds: [
        ...request.inheritFds,
        ...plan.files.map((file, i) => ({ fd: passed[i]!, target: file.target })),
        ...(gate === null || plan.gate === null ? [] : [
          { fd: gate.childBlock, target: plan.gate.block },
          { fd: gate.childInfo, target: plan.gate.info },
        ]),
        ...copyFds,
        ...descriptorFds,
      ],
    });
    let init: SandboxInit | null = null;
    if (gate !== null && plan.gate !== null) {
      closeChildEnds(gate);
      let started: boolean;
      try {
        // The session's own cgroup (when the host allows): made while bwrap starts up (its mkdir and
        // limits are off the launch's critical path) and joined at the gate, before the program runs.
        const held = ceilings = Ceilings.create(
          request.id,
          request.limits,
          true,
          cgroupMode(),
          request.cgroupOwner,
        );
        const result = passGate(child.pid, plan, gate, (sandboxPid) => {
          try {
            held.join([child.pid, sandboxPid]);
          } catch (cause) {
            throw new SandboxError(
              "E_SANDBOX_START",
              "Could not move the sandbox into its session's cgroup, so the program was not run",
              { cause, details: { helper_pid: child.pid, sandbox_pid: sandboxPid } },
            );
          }
          // A write to cgroup.procs that succeeded moved the process: nothing to read back.
        });
        started = result.started;
        if (started && result.childPid !== null) ceilings.attach(result.childPid);
        init = result.init;
        // The program waits at the gate with its loopback up: the relay listens there before it runs.
        const relayRequest = request.netRelay ?? null;
        if (started && relayRequest !== null && result.childPid !== null) {
          netRelay = startNetRelay(relayRequest, result.childPid);
        }
      } catch (error: unknown) {
        killHelper(child);
        init?.handle.close();
        throw error;
      }
      if (!started) {
        const failure = setupFailure(child);
        killHelper(child);
        throw failure;
      }
    }
    const held = ceilings ??= Ceilings.create(
      request.id,
      request.limits,
      plan.backend === "bwrap",
      cgroupMode(),
      request.cgroupOwner,
    );
    let settled = false;
    const release = () => {
      if (settled) return;
      // Settled only once released: when releasing throws, the caller's abort() still cleans up.
      if (gate !== null && plan.gate !== null) releaseGate(gate);
      settled = true;
      if (gate !== null) closeGate(gate);
    };
    const abort = () => {
      if (settled) return;
      settled = true;
      // Killed before its gate closes (bwrap reads the gate's EOF as "go"); a program launched without a
      // gate is already running, and must not go on without its session either.
      killHelper(child);
      if (gate !== null) closeGate(gate);
      held.close(); // Empties and removes the session's cgroup.
      init?.handle.close();
      netRelay?.close();
      releaseSubreaper?.();
    };
    launched = true;
    return {
      child,
      ceilings: held,
      backend: plan.backend,
      netRelay,
      ...(request.watcher === undefined ? {} : { watcher: request.watcher }),
      processTree: (later) =>
        new ProcessTree({
          pid: child.pid,
          // Under a sandbox the direct child is its launcher (bwrap); the program shares its process group.
          launcher: plan.backend === "bwrap",
          init,
          ceilings: held,
          releaseSubreaper: releaseSubreaper ?? null,
          later,
        }),
      release,
      abort,
    };
  } catch (error: unknown) {
    releaseSubreaper?.();
    throw error;
  } finally {
    if (!launched) {
      ceilings?.close(); // Every error path empties and removes the session's cgroup.
      if (gate !== null) closeGate(gate);
    }
    for (const fd of passed) closeQuietly(fd);
  }
}
