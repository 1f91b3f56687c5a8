/**
 * Options of a session and their defaults.
 *
 * @module
 */
import { hostHome } from "../policy/mod.ts";
import { isAbsolute, normalize } from "node:path";
import { UsageError } from "../errors.ts";
import { MAX_COLS, MAX_DURATION_MS, MAX_ROWS } from "../protocol/mod.ts";
import type { InheritedFd } from "../pty/mod.ts";
import type { NetRelayRequest } from "../launch/mod.ts";
import type { Policy } from "../policy/mod.ts";
import { SCREEN_HISTORY } from "../terminal/mod.ts";

/**
 * How to sandbox a session. `auto` picks the platform backend (bubblewrap on Linux) and fails with
 * `E_SANDBOX_UNAVAILABLE` when it cannot run: it never falls back. `external` means the caller already
 * runs Specter inside a sandbox (a container); `none` runs the program with the caller's full rights.
 * Both must be acknowledged in writing.
 */
export type SandboxOption =
  | {
    readonly mode: "auto" | "bwrap" | "seatbelt";
    readonly policy: Policy;
    /** Keep git metadata, shell start-up files and credentials read-only inside writable roots. */
    readonly strictWrite?: boolean;
  }
  | { readonly mode: "external"; readonly acknowledge: "external-sandbox" }
  | { readonly mode: "none"; readonly acknowledge: "unsafe-no-sandbox" };

/** Options for {@link spawn}. Absent fields take the documented defaults. */
export interface SpawnOptions {
  /** Program and arguments. The program is looked up on the child's `PATH` unless it contains a slash. */
  readonly argv: readonly string[];
  /**
   * Run through a shell: `true` uses `/bin/sh`, a string names the shell. `argv` is joined with spaces
   * into the `-c` script. Absent or false: `argv` is executed directly, no shell involved.
   */
  readonly shell?: boolean | string;
  /**
   * Environment additions and overrides. The child gets only the minimal default
   * (`TERM=xterm-256color`, `LANG=C.UTF-8`, and `PATH`, `HOME` from this process) plus these.
   */
  readonly env?: Readonly<Record<string, string>>;
  /** Absolute working directory; default: this process's cwd. */
  readonly cwd?: string;
  /** Columns (default 80). */
  readonly cols?: number;
  /** Rows (default 24). */
  readonly rows?: number;
  /** Session id; default: a random UUID. */
  readonly id?: string;
  /** Human title carried in `start`/`exit`; `null` when absent. */
  readonly title?: string;
  /** Human description carried in `start`/`exit`; `null` when absent. */
  readonly description?: string;
  /** The agent that owns the session, carried in `start`/`exit`; `null` when absent. */
  readonly parentAgent?: string;
  /** Quiet time before one `idle` frame, in ms (default 200; 0 disables idle frames). */
  readonly idleMs?: number;
  /** Regexes matched against the current line once output settles; none when absent or empty. */
  readonly promptRegex?: readonly (string | RegExp)[];
  /** Quiet time after which prompt regexes are tried, in ms (default 50). */
  readonly promptSettleMs?: number;
  /** Wall-clock limit in ms; on expiry the session is terminated and `exit.timed_out` is true. None when absent. */
  readonly timeoutMs?: number;
  /**
   * Resource ceilings for the whole process tree; each absent field means no ceiling of that kind.
   * A policy's budgets can only tighten them. A breach emits `capsule_kill`, kills the tree, then `exit`.
   */
  readonly limits?: {
    /**
     * Memory of the whole tree in bytes, tmpfs files included (the session's cgroup where the host allows,
     * else its resident memory sampled; RLIMIT_AS at 4× as a backstop).
     */
    readonly memoryBytes?: number;
    /** CPU seconds (RLIMIT_CPU per process, and the tree's total watched). */
    readonly cpuSeconds?: number;
    /** Processes (RLIMIT_NPROC, and the tree's count watched). */
    readonly processes?: number;
    /** Largest file the program may write, in bytes (RLIMIT_FSIZE). */
    readonly fileSizeBytes?: number;
  };
  /** Output budget in bytes; reaching it emits `overflow` (`max_output`) and kills the session. None when absent. */
  readonly maxOutputBytes?: number;
  /** Unconsumed frame bytes before reading pauses (default 8 MiB). */
  readonly bufferBytes?: number;
  /** How long the buffer may stay full before `overflow` (`buffer`) and SIGKILL, in ms (default 5000). */
  readonly overflowTimeoutMs?: number;
  /** Grace between SIGHUP/SIGTERM and SIGKILL when terminating, in ms (default 2000). */
  readonly terminateGraceMs?: number;
  /** Lines kept for `exit.last_lines` (default 20). */
  readonly lastLines?: number;
  /** Heartbeat `ping` frame interval in ms; none when absent or 0. */
  readonly heartbeatMs?: number;
  /**
   * Only OSC 133 marks carrying `specter=NONCE` make `command` frames (the shell integration Specter
   * injected prints it; see `shell_integration.ts`). Absent: every mark counts.
   */
  readonly commandMarkNonce?: string;
  /**
   * When the program is an interactive bash or zsh, inject shell integration (OSC 133 marks carrying a
   * fresh nonce, which then becomes `commandMarkNonce`): bash through `--init-file`, zsh through
   * `ZDOTDIR`, without touching the user's rc files (see `shell_integration.ts`). Default false.
   */
  readonly shellIntegration?: boolean;
  /**
   * False: run the program without a terminal. Its stdin, stdout and stderr are one unix stream socket
   * (`isatty()` is false, so programs print plainly and read input as from a pipe); there is no line
   * discipline: no echo, no `\r\n`, and control keys are bytes, not signals. Default true.
   */
  readonly tty?: boolean;
  /**
   * Write an asciicast v2 recording; `input: true` also records what was typed; `exclusive: true` makes a
   * new file (mode 0600; an existing one is refused) instead of truncating. None when absent.
   */
  readonly record?: { readonly path: string; readonly input?: boolean; readonly exclusive?: boolean };
  /** The run's artifacts directory, named in the `start` frame; none when absent. */
  readonly artifacts?: string;
  /**
   * Host directories the program must neither see nor write, guarded as the artifacts directory is (a
   * grant that would make one writable is refused with `E_POLICY_ARTIFACTS_EXPOSED`; one that would show
   * it hides it under bwrap). The daemon's state and socket directories: its keeper's socket spawns
   * programs, its frame logs are what clients are told.
   */
  readonly protectedDirs?: readonly string[];
  /**
   * A persistent layer (the daemon's `--persist`): an existing directory Specter made, bound writable as
   * the program's `HOME` (`/home/specter` under bwrap; the directory itself without a sandbox). What the
   * program writes there outlives it. Not available under Seatbelt (`E_SANDBOX_UNAVAILABLE`).
   */
  readonly persistDir?: string;
  /** Extra fds for the child (e.g. a seccomp filter as fd 3); none when absent. */
  readonly inheritFds?: readonly InheritedFd[];
  /**
   * A network allow list's bridge (bwrap only): the relay started in the sandbox's network namespace
   * before the program runs, piping `127.0.0.1:3128` there to the run's proxy on `socketPath`. The
   * socket's directory is guarded as the artifacts directory is (never visible inside). Absent: none.
   */
  readonly netRelay?: NetRelayRequest;
  /**
   * Keep a terminal model from the start, so every `screen()` snapshot is exact (default false). Without
   * it the model is created on the first `screen()` / `snapshot` request and replays only the retained
   * recent output (`screenHistory`); snapshots say `partial: true` when older output was dropped.
   */
  readonly screen?: boolean;
  /**
   * Recent output retained for a terminal model created late, in UTF-16 code units (≈ bytes of ASCII;
   * default 16384; 0 keeps none). Held only once the program printed something, and never more than it
   * printed. Ignored with `screen: true`.
   */
  readonly screenHistory?: number;
  /**
   * Read the terminal on Specter's reader thread (one Worker shared by the process, started with the first
   * such session and stopped after the last; about 20 MiB once) instead of the JS thread. The program then
   * keeps writing while frames are written out or the terminal model parses, which roughly doubles the
   * throughput of a fast writer (`docs/benchmarks.md`). Default: `true` with `screen: true` (the model's
   * parsing would otherwise stall reading), else `false`, so that hosts with many mostly idle sessions pay
   * nothing. The CLI turns it on. If the thread cannot run, the session reads on the JS thread; no output
   * is lost either way.
   */
  readonly readerThread?: boolean;
  /**
   * The sandbox. Absent: `{ mode: "auto" }` with the `strict` preset (bubblewrap on Linux). Running
   * without one must be asked for explicitly and acknowledged.
   */
  readonly sandbox?: SandboxOption;
}

/** Resource ceilings after defaults: `null` means none of that kind. */
export interface ResolvedLimits {
  readonly memoryBytes: number | null;
  readonly cpuSeconds: number | null;
  readonly processes: number | null;
  readonly fileSizeBytes: number | null;
}

/** Options with every default applied and values checked. */
export interface ResolvedOptions {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** Only the variables given in `options.env` (they win over variables a policy passes through). */
  readonly explicitEnv: Readonly<Record<string, string>>;
  readonly cwd: string;
  readonly cols: number;
  readonly rows: number;
  readonly id: string;
  readonly title: string | null;
  readonly description: string | null;
  readonly parentAgent: string | null;
  readonly idleMs: number;
  readonly promptRegex: readonly RegExp[];
  readonly promptSettleMs: number;
  readonly timeoutMs: number | null;
  readonly maxOutputBytes: number | null;
  readonly limits: ResolvedLimits;
  readonly bufferBytes: number;
  readonly overflowTimeoutMs: number;
  readonly terminateGraceMs: number;
  readonly lastLines: number;
  readonly heartbeatMs: number;
  readonly record: { readonly path: string; readonly input: boolean; readonly exclusive: boolean } | null;
  readonly commandMarkNonce: string | null;
  readonly shellIntegration: boolean;
  readonly tty: boolean;
  readonly inheritFds: readonly InheritedFd[];
  readonly netRelay: NetRelayRequest | null;
  readonly screen: boolean;
  readonly screenHistory: number;
  readonly readerThread: boolean;
  readonly artifacts: string | null;
  readonly protectedDirs: readonly string[];
  readonly persistDir: string | null;
  readonly sandbox: SandboxOption | null;
}

/** Default values, in one place. */
export const DEFAULTS = {
  cols: 80,
  rows: 24,
  idleMs: 200,
  promptSettleMs: 50,
  bufferBytes: 8 * 1024 * 1024,
  overflowTimeoutMs: 5000,
  terminateGraceMs: 2000,
  lastLines: 20,
  screenHistory: SCREEN_HISTORY,
  path: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
} as const;

/** The minimal environment every child starts from. */
export function defaultEnv(): Record<string, string> {
  return {
    TERM: "xterm-256color",
    LANG: "C.UTF-8",
    PATH: hostPath(),
    HOME: hostHome(),
  };
}

/** The PATH read last: each read is a fresh copy, and a thousand sessions may keep their env for good. */
let lastPath = "";

/** The host's PATH (or the default), one string shared while it does not change. */
function hostPath(): string {
  const path = Deno.env.get("PATH") ?? DEFAULTS.path;
  if (path !== lastPath) lastPath = path;
  return lastPath;
}

function nonNegative(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) {
    throw new UsageError(`Option "${name}" must be a non-negative number`);
  }
  return value;
}

/** A duration in ms: at most what a timer can wait (a longer one would fire at once, not late). */
function duration(name: string, value: number | undefined, fallback: number): number {
  const ms = nonNegative(name, value, fallback);
  if (ms > MAX_DURATION_MS) {
    throw new UsageError(`Option "${name}" must be at most ${MAX_DURATION_MS} ms, got ${value}`);
  }
  return ms;
}

/** A size or count: a whole number below 2^53 (cgroup files, rlimits and counters take it as it is). */
function bytes(name: string, value: number | undefined, fallback: number): number {
  const n = Math.floor(nonNegative(name, value, fallback));
  if (n > Number.MAX_SAFE_INTEGER) {
    throw new UsageError(`Option "${name}" must be at most ${Number.MAX_SAFE_INTEGER}, got ${value}`);
  }
  return n;
}

function positiveInt(name: string, value: number | undefined, fallback: number, max = 10000): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new UsageError(`Option "${name}" must be an integer from 1 to ${max}, got "${value}"`);
  }
  return value;
}

function optionalDuration(name: string, value: number | undefined): number | null {
  return value === undefined ? null : duration(name, value, 0);
}

function optionalBytes(name: string, value: number | undefined): number | null {
  return value === undefined ? null : bytes(name, value, 0);
}

/** What `acknowledge` must say for each mode that runs without Specter's sandbox. */
const ACKNOWLEDGEMENTS = { none: "unsafe-no-sandbox", external: "external-sandbox" } as const;

/**
 * The types already require these, but a JavaScript caller (or a cast) is not held by types: a run without
 * the sandbox must still be asked for in writing, and a sandbox without its policy is refused, not guessed.
 */
function checkSandbox(sandbox: SandboxOption | undefined): void {
  if (sandbox === undefined) return;
  const { mode } = sandbox as { mode?: unknown };
  if (mode === "none" || mode === "external") {
    const expected = ACKNOWLEDGEMENTS[mode];
    const given = (sandbox as { acknowledge?: unknown }).acknowledge;
    if (given !== expected) {
      throw new UsageError(
        `Sandbox mode "${mode}" must be acknowledged with acknowledge: "${expected}", got ${
          JSON.stringify(given)
        }`,
      );
    }
    return;
  }
  if (mode !== "auto" && mode !== "bwrap" && mode !== "seatbelt") {
    throw new UsageError(
      `Unknown sandbox mode ${JSON.stringify(mode)}: "auto", "bwrap", "seatbelt", "external" or "none"`,
    );
  }
  if (!("policy" in sandbox) || typeof sandbox.policy !== "object" || sandbox.policy === null) {
    throw new UsageError(`Sandbox mode "${mode}" needs a policy (from loadPolicy)`);
  }
}

/** Applies defaults and checks values (throws `E_USAGE`). */
export function resolveOptions(options: SpawnOptions): ResolvedOptions {
  if (options.argv.length === 0) throw new UsageError("No command given");
  const cwd = options.cwd ?? Deno.cwd();
  // A trailing slash is fine ("/work/" is "/work"); "..", "." and "//" inside are not.
  const trimmed = (path: string) => path.replace(/(.)\/+$/, "$1");
  if (!isAbsolute(cwd) || trimmed(normalize(cwd)) !== trimmed(cwd)) {
    throw new UsageError(`Option "cwd" must be an absolute, normalized path, got "${cwd}"`);
  }
  for (const key of Object.keys(options.env ?? {})) {
    if (key === "" || key.includes("=") || key.includes("\0")) {
      throw new UsageError(`Invalid environment name "${key}"`);
    }
  }
  let argv = options.argv;
  if (options.shell !== undefined && options.shell !== false) {
    argv = [options.shell === true ? "/bin/sh" : options.shell, "-c", options.argv.join(" ")];
  }
  checkSandbox(options.sandbox);
  const promptRegex = (options.promptRegex ?? []).map((r) => {
    if (r instanceof RegExp) return r;
    try {
      return new RegExp(r);
    } catch (error: unknown) {
      throw new UsageError(`Invalid prompt regex "${r}": ${(error as Error).message}`, { cause: error });
    }
  });
  return {
    argv,
    env: { ...defaultEnv(), ...options.env },
    explicitEnv: { ...options.env },
    cwd,
    cols: positiveInt("cols", options.cols, DEFAULTS.cols, MAX_COLS),
    rows: positiveInt("rows", options.rows, DEFAULTS.rows, MAX_ROWS),
    id: options.id ?? crypto.randomUUID(),
    title: options.title ?? null,
    description: options.description ?? null,
    parentAgent: options.parentAgent ?? null,
    idleMs: duration("idleMs", options.idleMs, DEFAULTS.idleMs),
    promptRegex,
    promptSettleMs: duration("promptSettleMs", options.promptSettleMs, DEFAULTS.promptSettleMs),
    timeoutMs: optionalDuration("timeoutMs", options.timeoutMs),
    maxOutputBytes: optionalBytes("maxOutputBytes", options.maxOutputBytes),
    limits: {
      memoryBytes: optionalBytes("limits.memoryBytes", options.limits?.memoryBytes),
      cpuSeconds: optionalBytes("limits.cpuSeconds", options.limits?.cpuSeconds),
      processes: optionalBytes("limits.processes", options.limits?.processes),
      fileSizeBytes: optionalBytes("limits.fileSizeBytes", options.limits?.fileSizeBytes),
    },
    bufferBytes: Math.max(1, bytes("bufferBytes", options.bufferBytes, DEFAULTS.bufferBytes)),
    overflowTimeoutMs: duration("overflowTimeoutMs", options.overflowTimeoutMs, DEFAULTS.overflowTimeoutMs),
    terminateGraceMs: duration("terminateGraceMs", options.terminateGraceMs, DEFAULTS.terminateGraceMs),
    lastLines: positiveInt("lastLines", options.lastLines, DEFAULTS.lastLines),
    heartbeatMs: duration("heartbeatMs", options.heartbeatMs, 0),
    record: options.record
      ? {
        path: options.record.path,
        input: options.record.input ?? false,
        exclusive: options.record.exclusive ?? false,
      }
      : null,
    commandMarkNonce: options.commandMarkNonce ?? null,
    shellIntegration: options.shellIntegration ?? false,
    tty: options.tty ?? true,
    inheritFds: options.inheritFds ?? [],
    netRelay: options.netRelay ?? null,
    screen: options.screen ?? false,
    screenHistory: Math.floor(nonNegative("screenHistory", options.screenHistory, DEFAULTS.screenHistory)),
    readerThread: options.readerThread ?? options.screen ?? false,
    artifacts: options.artifacts ?? null,
    protectedDirs: options.protectedDirs ?? [],
    persistDir: options.persistDir ?? null,
    sandbox: options.sandbox ?? null,
  };
}
