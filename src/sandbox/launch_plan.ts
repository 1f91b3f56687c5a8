/**
 * The shapes of a launch: what the caller asks to run ({@link LaunchRequest}), what the host offers
 * ({@link HostFacts}), what was opened for it ({@link PlanOptions}) and the plan a backend makes of them
 * ({@link LaunchPlan}). A leaf module: the planners (`plan.ts`, `bwrap.ts`, `seatbelt/`) import it and
 * not each other.
 *
 * @module
 */
import type { Policy } from "../policy/mod.ts";
import type { NetProxyPlan } from "./net_proxy.ts";

/** The sandbox backends. `none` and `external` run the program directly. */
export const SANDBOX_BACKENDS = ["bwrap", "seatbelt", "external", "none"] as const;
/** A sandbox backend name. */
export type SandboxBackend = typeof SANDBOX_BACKENDS[number];

/** What the caller wants to run, before any sandbox is applied. */
export interface LaunchRequest {
  /** Absolute path of the program (already resolved on the child's PATH). */
  readonly program: string;
  /** Arguments after the program. */
  readonly args: readonly string[];
  /** `argv[0]` the program should see (defaults to `program`). */
  readonly argv0?: string;
  /** Absolute working directory the program should start in. */
  readonly cwd: string;
  /** The complete environment the program should see. */
  readonly env: Readonly<Record<string, string>>;
  /**
   * Rlimits to set before the program's first instruction, by running it through util-linux `prlimit`
   * (`posix_spawn` cannot set them). Absent or empty: none, and no launcher.
   */
  readonly rlimits?: Rlimits;
  /**
   * Absolute path of util-linux `setsid`, when the program runs on the terminal (fd 0) inside a sandbox:
   * it starts as `setsid --ctty --wait -- program`, leading a session of its own whose controlling
   * terminal is the session's terminal, and the spawner does not give that terminal to the launcher. So
   * the sandbox's own processes (bwrap outside, its init inside) are not in the terminal's session: a
   * ctrl-c reaches only the program's foreground group, never the launcher whose death would end the
   * sandbox. Absent: the program runs in the launcher's session.
   */
  readonly ownSession?: string;
  /**
   * Files the program reads at start-up (shell integration), placed read-only inside the sandbox by the
   * bwrap backend (`--ro-bind-data` from a pipe, beneath {@link DATA_ROOT}, on the sandbox's own root so
   * no grant can put them on the host). The other backends place none: their spawner writes the files to
   * a private directory instead. Absent or empty: none.
   */
  readonly dataFiles?: readonly DataFile[];
  /**
   * Content the program itself receives on these fds (shell integration's nonce), under every backend
   * (bwrap leaves descriptors it does not use to the program). Absent or empty: none.
   */
  readonly passFiles?: readonly PlanFile[];
  /**
   * bwrap: run the program from an exec-only copy of itself at this path beneath {@link DATA_ROOT}
   * (`--perms 0111 --ro-bind-data` of the opened program). A process that cannot read its own executable is
   * not dumpable, so the processes it starts, under the same uid, cannot read its memory, environment or
   * descriptors (`/proc/PID/mem`, `environ`, `fd`, `pidfd_getfd`): what keeps a shell's secret from its
   * commands. Ignored by the other backends. Absent: the program runs from its own path.
   */
  readonly execOnlyCopy?: string;
}

/** Where the bwrap backend places {@link LaunchRequest.dataFiles} inside the sandbox. */
export const DATA_ROOT = "/run/specter";

/** A file for {@link LaunchRequest.dataFiles}. */
export interface DataFile {
  /** Absolute path inside the sandbox, beneath {@link DATA_ROOT}. */
  readonly dest: string;
  /** The bytes. */
  readonly content: Uint8Array;
}

/** Rlimits for {@link LaunchRequest.rlimits}; the absolute `prlimit` path is required when any is set. */
export interface Rlimits {
  /** Absolute path of util-linux `prlimit`. */
  readonly prlimit: string;
  /** RLIMIT_AS in bytes. */
  readonly addressSpace?: number;
  /** RLIMIT_CPU in seconds. */
  readonly cpuSeconds?: number;
  /** RLIMIT_NPROC. */
  readonly processes?: number;
  /** RLIMIT_FSIZE in bytes. */
  readonly fileSize?: number;
}

/**
 * The program's command line, behind `prlimit` when rlimits are requested: `prlimit --as=… -- program
 * args`. prlimit sets the limits on itself and execs the program, so they hold from its first
 * instruction. With {@link LaunchRequest.ownSession}, `setsid --ctty --wait --` comes first.
 */
export function programCommand(request: LaunchRequest): string[] {
  const flags = rlimitFlags(request.rlimits);
  const limited = flags.length === 0
    ? [request.program, ...request.args]
    : [request.rlimits!.prlimit, ...flags, "--", request.program, ...request.args];
  // setsid first: it only calls setsid() and TIOCSCTTY and execs, so the rlimits prlimit sets then hold
  // for the program's own process. --wait matters only if setsid had to fork (the process leading its
  // group already), to pass the exit status on.
  if (request.ownSession === undefined) return limited;
  return [request.ownSession, "--ctty", "--wait", "--", ...limited];
}

/** The launchers {@link programCommand} puts before the program (each must exist inside the sandbox). */
export function programLaunchers(request: LaunchRequest): string[] {
  const launchers = request.ownSession === undefined ? [] : [request.ownSession];
  if (rlimitFlags(request.rlimits).length > 0) launchers.push(request.rlimits!.prlimit);
  return launchers;
}

function rlimitFlags(limits: Rlimits | undefined): string[] {
  const flags: string[] = [];
  if (limits?.addressSpace !== undefined) flags.push(`--as=${limits.addressSpace}`);
  if (limits?.cpuSeconds !== undefined) flags.push(`--cpu=${limits.cpuSeconds}`);
  if (limits?.processes !== undefined) flags.push(`--nproc=${limits.processes}`);
  if (limits?.fileSize !== undefined) flags.push(`--fsize=${limits.fileSize}`);
  return flags;
}

/** Facts about the host a backend needs; gathered once by `hostFacts()` in `probe.ts`. */
export interface HostFacts {
  /** Absolute path of the bwrap binary. */
  readonly bwrap: string;
  /** `/bin`, `/lib`, … are symlinks into `/usr` (true on current Debian, Fedora, Arch, Ubuntu). */
  readonly mergedUsr: boolean;
  /** The seccomp filter (classic BPF) to pass to bwrap, already compiled for this architecture. */
  readonly seccompFilter: Uint8Array;
  /**
   * With network off: the filter for a policy that grants host sockets (`fs.sockets`), which allows
   * AF_UNIX sockets. Absent: such a policy cannot be planned (`E_SANDBOX_START`).
   */
  readonly seccompFilterHostSockets?: Uint8Array;
  /**
   * When Specter runs as root: bwrap is started through `setpriv --reuid=UID --regid=UID --clear-groups
   * --nnp`, so that the sandbox's user namespace maps to `uid`, a host uid of its own (`root_mapping.ts`),
   * and none of root's groups reach it. `null` otherwise (the sandbox maps to the caller's uid).
   */
  readonly rootLauncher: { readonly setpriv: string; readonly uid: number } | null;
  /**
   * Which paths of `MASKED_PATHS` (`masks.ts`) exist on this host and are masked. Absent: every entry is
   * masked, and bwrap fails loudly on a host that lacks one (never silently unmasked).
   */
  readonly maskedPaths?: readonly string[];
}

/** Content to hand to the executed process on a given fd (written to a pipe by the spawner). */
export interface PlanFile {
  /** The fd number in the child. */
  readonly target: number;
  /** What the fd carries (for auditors). */
  readonly purpose: string;
  /** The bytes. */
  readonly content: Uint8Array;
  /** A secret (a nonce): never hashed into a fingerprint, never shown. Absent: false. */
  readonly secret?: boolean;
}

/**
 * An opened program handed to bwrap as the content of an exec-only copy (`--perms 0111 --ro-bind-data`):
 * the spawner opens the realised descriptor of `path` for reading and passes it as `target`.
 */
export interface PlanCopy {
  /** The fd number bwrap reads the copy from. */
  readonly target: number;
  /** The host path that was opened (its key in the realization). */
  readonly path: string;
  /** Where the copy lands inside the sandbox (beneath `DATA_ROOT`). */
  readonly dest: string;
}

/**
 * A path the plan binds from a descriptor: the caller opened it (`realizePolicy`) and passes that fd as
 * `target`; after the sandbox is set up, its mount table must show `identity` at `dest`.
 */
export interface PlanDescriptor {
  /** The fd number in the executed process. */
  readonly target: number;
  /** The host path that was opened (its key in the realization). */
  readonly path: string;
  /** Where it is mounted inside the sandbox. */
  readonly dest: string;
  /** Why it is bound: `exec`, `read`, `socket`, `write`, `protect` or `persist`. */
  readonly purpose: string;
  /** Mounted read-write (`fs.write`, `persist`); everything else is read-only. */
  readonly writable: boolean;
  /** `major:minor:ino` of the opened inode. */
  readonly identity: string;
}

/** The pipes through which the launch is held until Specter has checked the sandbox (bwrap). */
export interface PlanGate {
  /** Fd bwrap blocks on (read end of a pipe) right before it runs the program. */
  readonly block: number;
  /** Fd bwrap writes its info JSON (`child-pid`) to (write end of a pipe). */
  readonly info: number;
}

/** Everything needed to start a program under a backend. */
export interface LaunchPlan {
  /** The backend in force. */
  readonly backend: SandboxBackend;
  /** What to execute: an absolute program path and its arguments. */
  readonly argv: readonly string[];
  /** `argv[0]` for the executed process. */
  readonly argv0: string;
  /** Environment of the executed process (for bwrap: its own, minimal; the program's is in `argv`). */
  readonly env: Readonly<Record<string, string>>;
  /** Host working directory of the executed process. */
  readonly cwd: string;
  /** Working directory the program sees (differs from `cwd` inside a sandbox). */
  readonly programCwd: string;
  /** Fds to pass. Empty when none. */
  readonly files: readonly PlanFile[];
  /** Opened paths to pass as fds and bind (bwrap). Empty when none. */
  readonly descriptors: readonly PlanDescriptor[];
  /** Opened programs bwrap copies exec-only into the sandbox (`LaunchRequest.execOnlyCopy`). Absent: none. */
  readonly copies?: readonly PlanCopy[];
  /**
   * Root mode: the host uid the sandbox runs as; the launch binds idmapped clones of the opened paths that
   * map it to root (`root_mapping.ts`). Absent: the sandbox is the caller's uid.
   */
  readonly sandboxUid?: number;
  /** The setup gate (bwrap), or `null`: the program starts at once. */
  readonly gate: PlanGate | null;
  /**
   * True when a launcher inside makes the terminal the program's controlling terminal
   * ({@link LaunchRequest.ownSession}): the spawner must then open it without making it its own.
   */
  readonly programTakesTerminal?: boolean;
  /** The policy the plan enforces (`null` for `none`/`external`, which enforce nothing themselves). */
  readonly policy: Policy | null;
  /**
   * The network proxy an allow-list policy needs: the port programs reach it at on their loopback
   * (`NET_PROXY_PORT`; the program's environment already names it). The spawner must start the proxy and,
   * under bwrap, the relay in the sandbox's network namespace before it opens the gate. `null` (or absent,
   * in a plan made by hand) when the policy has no allow list.
   */
  readonly netProxy?: NetProxyPlan;
}

/** What the plan needs to know about an opened path (its descriptor stays with the caller). */
export interface OpenedFacts {
  /** `major:minor:ino` of the inode, checked again in the sandbox's mount table. */
  readonly info: { readonly identity: string; readonly kind: string };
}

/**
 * Per-launch facts of the realisation a backend plans with. Each backend reads the fields it supports:
 * bubblewrap `protect`, `opened` and `hide`; Seatbelt `protect` and `tmpDir`.
 */
export interface PlanOptions {
  /**
   * Paths to keep read-only on top of the writable roots (strict-write; computed by `realizePolicy`,
   * which never includes a symlink). Empty or absent: none.
   */
  readonly protect?: readonly string[];
  /**
   * The paths `realizePolicy` opened, by the name the plan uses: each is bound from its descriptor
   * (`--bind-fd`/`--ro-bind-fd`), never by name. A path the plan needs that is not here is not bound
   * (missing read/exec entries) or, for the program and its launcher, fails the plan. Absent: a plan
   * of every path as if opened (to render or test it); spawning it fails, no fd exists for its binds.
   */
  readonly opened?: ReadonlyMap<string, OpenedFacts>;
  /**
   * Host paths inside read/exec grants to cover with an empty read-only tmpfs (the run's artifacts
   * directory where a grant shows it; computed by `guardArtifacts`). Empty or absent: none.
   */
  readonly hide?: readonly string[];
  /**
   * bubblewrap: host files inside grants to cover with `/dev/null`, read-only (secrets a grant only
   * contains; computed by `secretMasks`). Empty or absent: none.
   */
  readonly hideFiles?: readonly string[];
  /**
   * Seatbelt: a private temp directory the spawner created for this run (absolute, resolved through
   * symlinks): readable and writable, and `TMPDIR` in the plan's environment. macOS has no tmpfs to
   * mount, so without it nothing but `fs.write` is writable. Absent: none.
   */
  readonly tmpDir?: string;
  /**
   * bubblewrap: a session's persistent layer (`--persist`), a host directory in `opened`, bound writable
   * at {@link PERSIST_HOME} and made the program's `HOME`. Absent: none.
   */
  readonly persist?: string;
  /**
   * bubblewrap: the persistent layer's shell start-up files (host paths in `opened`), bound read-only over
   * themselves inside the home. Absent or empty: none.
   */
  readonly persistProtect?: readonly string[];
}

/** Where a persistent layer appears inside the sandbox (and the program's `HOME` then). */
export const PERSIST_HOME = "/home/specter";

/** The argv prefix that starts bwrap through a root launcher (empty when there is none). */
export function launcherArgs(launcher: HostFacts["rootLauncher"]): string[] {
  if (launcher === null) return [];
  const id = String(launcher.uid);
  return [launcher.setpriv, `--reuid=${id}`, `--regid=${id}`, "--clear-groups", "--nnp", "--"];
}
