/**
 * Starting a program on a terminal with `posix_spawnp`: new session, the slave as controlling terminal
 * on fds 0–2, signal dispositions and mask reset, optional extra fds.
 *
 * @module
 */
import { isAbsolute, join } from "node:path";
import { SpawnError } from "../errors.ts";
import { closeQuietly, cString, libc, pointerArray } from "./_libc.ts";
import { openPty, type PtyPair, setCloseOnExec, setNonBlocking, unixSocketPair } from "./pty.ts";

/** An fd of this process to hand to the child at a fixed number (e.g. a seccomp filter as fd 3). */
export interface InheritedFd {
  /** The fd in this process (ideally close-on-exec, so no other child sees it). */
  readonly fd: number;
  /** The number it gets in the child (≥ 3). */
  readonly target: number;
}

/** What to start. */
export interface SpawnRequest {
  /** Absolute program path followed by its arguments; `argv[0]` of the child is `argv0 ?? argv[0]`. */
  readonly argv: readonly string[];
  /** Overrides the child's `argv[0]` (defaults to the program path). */
  readonly argv0?: string;
  /** The complete environment of the child (nothing else is inherited). */
  readonly env: Readonly<Record<string, string>>;
  /** Absolute working directory; the child's cwd is this process's cwd when absent. */
  readonly cwd?: string;
  /** Terminal columns. */
  readonly cols: number;
  /** Terminal rows. */
  readonly rows: number;
  /** Extra fds to pass; none when absent or empty. */
  readonly inheritFds?: readonly InheritedFd[];
  /**
   * False: the program runs without a terminal on fds 0–2. They are one end of a unix stream socket pair
   * (what `isatty()` calls not a terminal; bidirectional, so input and output go through one descriptor
   * as with a terminal's master), and the other end is {@link SpawnedChild.io}. The terminal still exists,
   * as the session's controlling terminal, unused. Default true.
   */
  readonly tty?: boolean;
  /**
   * False: the terminal is opened without becoming the child's controlling terminal (its fresh session has
   * none). For a launcher that gives it to the program itself (`setsid --ctty` inside a sandbox), so that
   * the launcher is outside the terminal's session and its signals. Default true.
   */
  readonly controllingTerminal?: boolean;
}

/** A started child: its pid and the master side of its terminal. */
export interface SpawnedChild {
  /** Child pid; also its session id and process-group id (it is a session leader). */
  readonly pid: number;
  /** Master fd (non-blocking, close-on-exec). The caller owns it. */
  readonly master: number;
  /** Slave path, for diagnostics. */
  readonly ttyPath: string;
  /**
   * Without a terminal (`tty: false`): this side of the socket on the program's fds 0–2 (non-blocking,
   * close-on-exec; the caller owns it). Its output is read and its input written here, not on `master`.
   */
  readonly io?: number;
}

/**
 * Finds `program` the way a shell would, but on the *child's* PATH (not this process's): a name with a
 * slash is taken relative to `cwd`; a bare name is searched in each `PATH` entry.
 * Throws `E_SPAWN_NOT_FOUND` or `E_SPAWN_NOT_EXECUTABLE`.
 */
export function resolveProgram(program: string, path: string | undefined, cwd: string): string {
  if (program === "") throw new SpawnError("E_SPAWN_NOT_FOUND", "The program name is empty");
  const candidates = program.includes("/")
    ? [isAbsolute(program) ? program : join(cwd, program)]
    : (path ?? "").split(":").filter((dir) => dir !== "").map((dir) =>
      join(isAbsolute(dir) ? dir : join(cwd, dir), program)
    );
  let sawNonExecutable: string | undefined;
  const { sym, table } = libc();
  for (const candidate of candidates) {
    // access() probes allocate nothing on the JS heap, unlike a FileInfo per PATH entry per spawn.
    const path = cString(candidate);
    if (sym.access(path, table.access.F_OK) !== 0) continue; // Not here; keep searching like execvp.
    if (sym.access(path, table.access.X_OK) === 0 && isRegularFile(candidate)) return candidate;
    sawNonExecutable ??= candidate;
  }
  if (sawNonExecutable !== undefined) {
    throw new SpawnError("E_SPAWN_NOT_EXECUTABLE", `Program "${sawNonExecutable}" is not executable`, {
      details: { program, path: sawNonExecutable },
    });
  }
  const where = program.includes("/") ? "" : " on the child's PATH";
  throw new SpawnError("E_SPAWN_NOT_FOUND", `Program "${program}" was not found${where}`, {
    details: { program, PATH: path ?? "" },
  });
}

function isRegularFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false; // Vanished between the two checks.
  }
}

function check(result: number, what: string): void {
  if (result !== 0) {
    throw new SpawnError("E_SPAWN", `${what} failed with error ${result}`, { details: { errno: result } });
  }
}

/** Opens a terminal and starts `request.argv` on it (throws `E_PTY_OPEN`, `E_SPAWN*`). */
export function spawnOnPty(request: SpawnRequest): SpawnedChild {
  const lib = libc();
  const { sym, table } = lib;
  const program = request.argv[0];
  if (program === undefined || !isAbsolute(program)) {
    throw new SpawnError("E_SPAWN", `The program path must be absolute, got "${program ?? ""}"`);
  }
  if (request.cwd !== undefined && !isAbsolute(request.cwd)) {
    throw new SpawnError("E_SPAWN_CWD", `The working directory must be absolute, got "${request.cwd}"`);
  }
  const pty: PtyPair = openPty(request.cols, request.rows);
  let io: [ours: number, theirs: number] | null = null;
  if (request.tty === false) {
    try {
      io = unixSocketPair("stream", "E_SPAWN");
      if (!setNonBlocking(io[0])) {
        const errno = libc().errno();
        for (const fd of io) closeQuietly(fd);
        throw new SpawnError("E_SPAWN", `Could not make the socket non-blocking (errno ${errno})`);
      }
    } catch (error: unknown) {
      closeQuietly(pty.master);
      closeQuietly(pty.slave);
      throw error;
    }
  }
  const { actions, attr, allSignals: all, noSignals: none } = scratch(table);
  let actionsReady = false;
  const lifted: number[] = [];
  let attrReady = false;
  try {
    check(sym.posix_spawn_file_actions_init(actions), "posix_spawn_file_actions_init");
    actionsReady = true;
    check(sym.posix_spawnattr_init(attr), "posix_spawnattr_init");
    attrReady = true;

    // Opening the slave by path (no O_NOCTTY) in a fresh session makes it the controlling terminal,
    // which job control needs. glibc runs setsid() before the file actions. With O_NOCTTY the session
    // has none, and a launcher hands the terminal to the program (see `controllingTerminal`).
    const ttyPath = cString(pty.path);
    const openFlags = request.controllingTerminal === false ? table.o.RDWR | table.o.NOCTTY : table.o.RDWR;
    check(sym.posix_spawn_file_actions_addopen(actions, 0, ttyPath, openFlags, 0), "addopen");
    if (io === null) {
      check(sym.posix_spawn_file_actions_adddup2(actions, 0, 1), "adddup2(1)");
      check(sym.posix_spawn_file_actions_adddup2(actions, 0, 2), "adddup2(2)");
    }
    const targets = new Set<number>();
    for (const { fd, target } of request.inheritFds ?? []) {
      if (target < 3 || targets.has(target)) {
        throw new SpawnError(
          "E_SPAWN",
          `Cannot pass fd ${fd} as ${target}: targets must be ≥ 3 and distinct`,
        );
      }
      targets.add(target);
    }
    // dup2 runs in order: a source numbered like an earlier target would be overwritten before it is
    // copied (and one equal to its own target would keep its close-on-exec flag). Sources at or below
    // the highest target are first lifted above it.
    const highest = Math.max(2, ...targets);
    const lift = (fd: number): number => {
      if (fd > highest) return fd;
      const copy = lib.fcntl(fd, table.fcntl.F_DUPFD_CLOEXEC, highest + 1);
      if (copy < 0) throw new SpawnError("E_SPAWN", `Could not duplicate fd ${fd} (errno ${lib.errno()})`);
      lifted.push(copy);
      return copy;
    };
    for (const { fd, target } of request.inheritFds ?? []) {
      check(sym.posix_spawn_file_actions_adddup2(actions, lift(fd), target), `adddup2(${target})`);
    }
    if (io !== null) {
      // After the slave became the controlling terminal (fd 0 above): the socket replaces it on 0–2.
      const source = lift(io[1]);
      for (const target of [0, 1, 2]) {
        check(sym.posix_spawn_file_actions_adddup2(actions, source, target), `adddup2(${target})`);
      }
    }
    closeEverythingElse(actions, targets);
    let cwdBytes: Uint8Array<ArrayBuffer> | undefined;
    if (request.cwd !== undefined) {
      if (!sym.posix_spawn_file_actions_addchdir_np) {
        throw new SpawnError("E_SPAWN_CWD", "This C library cannot set the child's working directory");
      }
      cwdBytes = cString(request.cwd);
      check(sym.posix_spawn_file_actions_addchdir_np(actions, cwdBytes), "addchdir_np");
    }

    // Deno ignores SIGPIPE and may block signals; the child must start with defaults and an empty mask.
    sym.sigfillset(all);
    sym.sigemptyset(none);
    check(sym.posix_spawnattr_setsigdefault(attr, all), "setsigdefault");
    check(sym.posix_spawnattr_setsigmask(attr, none), "setsigmask");
    const flags = table.spawn.SETSID | table.spawn.SETSIGDEF | table.spawn.SETSIGMASK |
      table.spawn.CLOEXEC_DEFAULT;
    check(sym.posix_spawnattr_setflags(attr, flags), "setflags");

    const args = [request.argv0 ?? program, ...request.argv.slice(1)].map(cString);
    const envs = Object.entries(request.env).map(([k, v]) => cString(`${k}=${v}`));
    const pid = new Int32Array(1);
    const result = sym.posix_spawnp(
      pid,
      cString(program),
      actions,
      attr,
      pointerArray(args),
      pointerArray(envs),
    );
    // Keep the encoded strings reachable until after the call returns.
    void cwdBytes;
    void ttyPath;
    if (result !== 0) throw spawnFailure(result, program, request.cwd);
    closeQuietly(pty.slave); // The child holds the slave now; ours would hide EOF/EIO on the master.
    if (io === null) return { pid: pid[0]!, master: pty.master, ttyPath: pty.path };
    closeQuietly(io[1]); // Likewise the program's end of the socket: ours would hide its EOF.
    return { pid: pid[0]!, master: pty.master, ttyPath: pty.path, io: io[0] };
  } catch (error: unknown) {
    closeQuietly(pty.master);
    closeQuietly(pty.slave);
    if (io !== null) { for (const fd of io) closeQuietly(fd); }
    throw error;
  } finally {
    for (const fd of lifted) closeQuietly(fd);
    if (actionsReady) sym.posix_spawn_file_actions_destroy(actions);
    if (attrReady) sym.posix_spawnattr_destroy(attr);
  }
}

let scratchBuffers:
  | {
    actions: Uint8Array<ArrayBuffer>;
    attr: Uint8Array<ArrayBuffer>;
    allSignals: Uint8Array<ArrayBuffer>;
    noSignals: Uint8Array<ArrayBuffer>;
  }
  | undefined;

/** The structs posix_spawn needs, allocated once: spawning is synchronous, so one set serves every call. */
function scratch(table: ReturnType<typeof libc>["table"]) {
  return scratchBuffers ??= {
    actions: new Uint8Array(table.sizes.posix_spawn_file_actions_t),
    attr: new Uint8Array(table.sizes.posix_spawnattr_t),
    allSignals: new Uint8Array(table.sizes.sigset_t),
    noSignals: new Uint8Array(table.sizes.sigset_t),
  };
}

/**
 * Makes sure the child gets fds 0–2 and the requested targets only. Specter's own fds are close-on-exec,
 * but fds it inherited from its parent may not be (a driver's pipe end held by the program would keep
 * that driver from ever seeing EOF). On macOS POSIX_SPAWN_CLOEXEC_DEFAULT does this; with glibc ≥ 2.34
 * a closefrom action after the dup2s; otherwise every open fd ≥ 3 is marked close-on-exec here.
 */
function closeEverythingElse(actions: Uint8Array<ArrayBuffer>, targets: ReadonlySet<number>): void {
  const { sym, table } = libc();
  if (table.spawn.CLOEXEC_DEFAULT !== 0) return;
  const highest = Math.max(2, ...targets);
  if (sym.posix_spawn_file_actions_addclosefrom_np) {
    for (let fd = 3; fd < highest; fd++) {
      // A source fd sitting between two targets; closing an fd that is not open is ignored.
      if (!targets.has(fd)) check(sym.posix_spawn_file_actions_addclose(actions, fd), `addclose(${fd})`);
    }
    check(sym.posix_spawn_file_actions_addclosefrom_np(actions, highest + 1), "addclosefrom_np");
    return;
  }
  for (const entry of Deno.readDirSync("/proc/self/fd")) {
    const fd = Number(entry.name);
    if (fd > 2) setCloseOnExec(fd);
  }
}

function spawnFailure(errno: number, program: string, cwd: string | undefined): SpawnError {
  const e = libc().table.errno;
  const details = { errno, program, cwd: cwd ?? null };
  // The chdir file action runs before exec, so ENOENT/ENOTDIR may be about the cwd.
  if (cwd !== undefined && (errno === e.ENOENT || errno === e.ENOTDIR)) {
    let cwdOk = false;
    try {
      cwdOk = Deno.statSync(cwd).isDirectory;
    } catch {
      cwdOk = false; // Missing or unreadable: reported below.
    }
    if (!cwdOk) {
      return new SpawnError("E_SPAWN_CWD", `Working directory "${cwd}" does not exist`, { details });
    }
  }
  if (errno === e.ENOENT) {
    return new SpawnError("E_SPAWN_NOT_FOUND", `Program "${program}" was not found`, { details });
  }
  if (errno === e.EACCES || errno === e.ENOEXEC) {
    return new SpawnError("E_SPAWN_NOT_EXECUTABLE", `Program "${program}" cannot be executed`, { details });
  }
  return new SpawnError("E_SPAWN", `posix_spawnp("${program}") failed with errno ${errno}`, { details });
}
