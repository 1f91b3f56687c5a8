/**
 * Per-platform constants and struct layouts for the libc calls the PTY layer makes, in one table.
 *
 * Linux x86-64 and arm64 (glibc) are exercised by the test suite on every run. The macOS rows are written
 * from the XNU/libSystem headers and unit-tested as data only: they have never been executed in CI.
 *
 * @module
 */
import { SpawnError } from "../errors.ts";

// A type only: the keeper loads this module and must not evaluate the protocol's zod schemas.
import type { SignalName } from "../protocol/mod.ts";

/** How a `wait()` status word encodes "continued" on this platform. */
export type ContinuedEncoding = "linux-0xffff" | "bsd-0x13-stopsig";

/** How variadic arguments (`fcntl`, `ioctl`) are passed: in registers, or on the stack (Apple arm64). */
export type VariadicConvention = "registers" | "stack";

/** Everything platform-specific the PTY layer needs. */
export interface PlatformTable {
  /** Key of this row, e.g. `linux-x86_64`. */
  readonly id: string;
  /** libc file names tried in order with `Deno.dlopen`. */
  readonly libc: readonly string[];
  /** Extra libraries that may hold `openpty` (older glibc kept it in libutil). */
  readonly libutil: readonly string[];
  /** Name of the function returning the address of the calling thread's `errno`. */
  readonly errnoFunction: "__errno_location" | "__error";
  /** How variadic libc functions receive their variadic arguments. */
  readonly variadic: VariadicConvention;
  /** `open()` and `fcntl()` flags. */
  readonly o: {
    readonly RDWR: number;
    readonly NOCTTY: number;
    readonly NONBLOCK: number;
    readonly CLOEXEC: number;
  };
  /** `fcntl()` commands and fd flags. */
  readonly fcntl: {
    readonly F_GETFD: number;
    readonly F_SETFD: number;
    readonly F_GETFL: number;
    readonly F_SETFL: number;
    readonly FD_CLOEXEC: number;
    /** Duplicate to the lowest free fd at or above the argument, close-on-exec. */
    readonly F_DUPFD_CLOEXEC: number;
  };
  /** `errno` values the PTY layer distinguishes. */
  readonly errno: {
    readonly ENOENT: number;
    readonly ESRCH: number;
    readonly EINTR: number;
    readonly EIO: number;
    readonly ENOEXEC: number;
    readonly ECHILD: number;
    readonly EAGAIN: number;
    readonly EACCES: number;
    readonly ENOTDIR: number;
  };
  /** `poll()` event bits; `struct pollfd` is `{ int fd; short events; short revents; }` (8 bytes). */
  readonly poll: {
    readonly POLLIN: number;
    readonly POLLOUT: number;
    readonly POLLERR: number;
    readonly POLLHUP: number;
    readonly POLLNVAL: number;
  };
  /** Terminal ioctls; `struct winsize` is four `unsigned short` (rows, cols, xpixel, ypixel). */
  readonly ioctl: { readonly TIOCSWINSZ: number; readonly TIOCGWINSZ: number };
  /**
   * Reading a terminal's `struct termios` (whose `c_lflag` ISIG and `c_cc` VINTR/VQUIT decide which typed
   * keys raise SIGINT and SIGQUIT): the ioctl (TCGETS, TIOCGETA), a buffer size it fits in, where
   * `c_lflag` lies and how wide it is (little-endian on every supported architecture), where `c_cc`
   * starts, and the `c_cc` value of a disabled key (`_POSIX_VDISABLE`).
   */
  readonly termios: {
    readonly get: number;
    readonly size: number;
    readonly lflagOffset: number;
    readonly lflagBytes: 4 | 8;
    readonly ccOffset: number;
    readonly ISIG: number;
    readonly VINTR: number;
    readonly VQUIT: number;
    readonly disabled: number;
  };
  /** `posix_spawnattr_setflags()` bits. */
  readonly spawn: {
    readonly SETPGROUP: number;
    readonly SETSIGDEF: number;
    readonly SETSIGMASK: number;
    readonly SETSID: number;
    /** Apple's flag making every fd not named in the file actions close-on-exec; 0 where absent. */
    readonly CLOEXEC_DEFAULT: number;
  };
  /** Sizes in bytes of opaque structs we allocate for libc. */
  readonly sizes: {
    readonly posix_spawn_file_actions_t: number;
    readonly posix_spawnattr_t: number;
    readonly sigset_t: number;
    /** `struct rlimit` is two `rlim_t` (64-bit on every supported platform). */
    readonly rlimit: number;
  };
  /** `access()` modes. */
  readonly access: { readonly F_OK: number; readonly X_OK: number };
  /** `socketpair()` arguments (a program run without a terminal gets one end on fds 0–2). */
  readonly socket: {
    readonly AF_UNIX: number;
    readonly SOCK_STREAM: number;
    readonly SOCK_SEQPACKET: number;
  };
  /** `waitpid()` options. */
  readonly wait: { readonly WNOHANG: number; readonly WUNTRACED: number; readonly WCONTINUED: number };
  /** How "continued" is encoded in a wait status. */
  readonly continued: ContinuedEncoding;
  /** `getrlimit()` resource numbers. */
  readonly rlimit: { readonly RLIMIT_NOFILE: number };
  /** Largest soft `RLIMIT_NOFILE` the kernel accepts (`OPEN_MAX` on macOS); `null` when the hard limit rules. */
  readonly maxNoFile: number | null;
  /** Signal numbers. */
  readonly signals: Readonly<Record<SignalName, number>>;
}

const LINUX_SIGNALS = {
  HUP: 1,
  INT: 2,
  QUIT: 3,
  ILL: 4,
  TRAP: 5,
  ABRT: 6,
  BUS: 7,
  FPE: 8,
  KILL: 9,
  USR1: 10,
  SEGV: 11,
  USR2: 12,
  PIPE: 13,
  ALRM: 14,
  TERM: 15,
  CHLD: 17,
  CONT: 18,
  STOP: 19,
  TSTP: 20,
  TTIN: 21,
  TTOU: 22,
  URG: 23,
  XCPU: 24,
  XFSZ: 25,
  VTALRM: 26,
  PROF: 27,
  WINCH: 28,
  IO: 29,
  SYS: 31,
} as const satisfies Record<SignalName, number>;

const DARWIN_SIGNALS = {
  HUP: 1,
  INT: 2,
  QUIT: 3,
  ILL: 4,
  TRAP: 5,
  ABRT: 6,
  BUS: 10,
  FPE: 8,
  KILL: 9,
  USR1: 30,
  SEGV: 11,
  USR2: 31,
  PIPE: 13,
  ALRM: 14,
  TERM: 15,
  CHLD: 20,
  CONT: 19,
  STOP: 17,
  TSTP: 18,
  TTIN: 21,
  TTOU: 22,
  URG: 16,
  XCPU: 24,
  XFSZ: 25,
  VTALRM: 26,
  PROF: 27,
  WINCH: 28,
  IO: 23,
  SYS: 12,
} as const satisfies Record<SignalName, number>;

// glibc on x86-64 and aarch64 uses the generic asm values for everything below.
const LINUX_GLIBC: Omit<PlatformTable, "id"> = {
  libc: ["libc.so.6"],
  libutil: ["libutil.so.1"],
  errnoFunction: "__errno_location",
  variadic: "registers",
  o: { RDWR: 0o2, NOCTTY: 0o400, NONBLOCK: 0o4000, CLOEXEC: 0o2000000 },
  fcntl: { F_GETFD: 1, F_SETFD: 2, F_GETFL: 3, F_SETFL: 4, FD_CLOEXEC: 1, F_DUPFD_CLOEXEC: 1030 },
  errno: {
    ENOENT: 2,
    ESRCH: 3,
    EINTR: 4,
    EIO: 5,
    ENOEXEC: 8,
    ECHILD: 10,
    EAGAIN: 11,
    EACCES: 13,
    ENOTDIR: 20,
  },
  poll: { POLLIN: 0x1, POLLOUT: 0x4, POLLERR: 0x8, POLLHUP: 0x10, POLLNVAL: 0x20 },
  ioctl: { TIOCSWINSZ: 0x5414, TIOCGWINSZ: 0x5413 },
  // The kernel's struct termios (TCGETS): four u32 flags, c_line, c_cc[19].
  termios: {
    get: 0x5401,
    size: 64,
    lflagOffset: 12,
    lflagBytes: 4,
    ccOffset: 17,
    ISIG: 0o1,
    VINTR: 0,
    VQUIT: 1,
    disabled: 0,
  },
  spawn: { SETPGROUP: 0x2, SETSIGDEF: 0x4, SETSIGMASK: 0x8, SETSID: 0x80, CLOEXEC_DEFAULT: 0 },
  // struct sizes from glibc's <spawn.h> and <bits/types/__sigset_t.h>.
  sizes: { posix_spawn_file_actions_t: 80, posix_spawnattr_t: 336, sigset_t: 128, rlimit: 16 },
  wait: { WNOHANG: 1, WUNTRACED: 2, WCONTINUED: 8 },
  access: { F_OK: 0, X_OK: 1 },
  socket: { AF_UNIX: 1, SOCK_STREAM: 1, SOCK_SEQPACKET: 5 },
  continued: "linux-0xffff",
  rlimit: { RLIMIT_NOFILE: 7 },
  maxNoFile: null,
  signals: LINUX_SIGNALS,
};

// libSystem: the spawn structs are opaque pointers that posix_spawn*_init allocates; sigset_t is 32 bits.
const DARWIN: Omit<PlatformTable, "id" | "variadic"> = {
  libc: ["/usr/lib/libSystem.B.dylib"],
  libutil: [],
  errnoFunction: "__error",
  o: { RDWR: 0x2, NOCTTY: 0x20000, NONBLOCK: 0x4, CLOEXEC: 0x1000000 },
  fcntl: { F_GETFD: 1, F_SETFD: 2, F_GETFL: 3, F_SETFL: 4, FD_CLOEXEC: 1, F_DUPFD_CLOEXEC: 67 },
  errno: {
    ENOENT: 2,
    ESRCH: 3,
    EINTR: 4,
    EIO: 5,
    ENOEXEC: 8,
    ECHILD: 10,
    EAGAIN: 35,
    EACCES: 13,
    ENOTDIR: 20,
  },
  poll: { POLLIN: 0x1, POLLOUT: 0x4, POLLERR: 0x8, POLLHUP: 0x10, POLLNVAL: 0x20 },
  ioctl: { TIOCSWINSZ: 0x80087467, TIOCGWINSZ: 0x40087468 },
  // <sys/termios.h>: four unsigned long flags, c_cc[20], then the speeds (72 bytes).
  termios: {
    get: 0x40487413,
    size: 72,
    lflagOffset: 24,
    lflagBytes: 8,
    ccOffset: 32,
    ISIG: 0x80,
    VINTR: 8,
    VQUIT: 9,
    disabled: 0xff,
  },
  spawn: { SETPGROUP: 0x2, SETSIGDEF: 0x4, SETSIGMASK: 0x8, SETSID: 0x400, CLOEXEC_DEFAULT: 0x4000 },
  sizes: { posix_spawn_file_actions_t: 8, posix_spawnattr_t: 8, sigset_t: 4, rlimit: 16 },
  wait: { WNOHANG: 1, WUNTRACED: 2, WCONTINUED: 0x10 },
  access: { F_OK: 0, X_OK: 1 },
  socket: { AF_UNIX: 1, SOCK_STREAM: 1, SOCK_SEQPACKET: 5 },
  continued: "bsd-0x13-stopsig",
  rlimit: { RLIMIT_NOFILE: 8 },
  maxNoFile: 10240,
  signals: DARWIN_SIGNALS,
};

/** Every supported `${Deno.build.os}-${Deno.build.arch}` pair. */
export const PLATFORMS = {
  "linux-x86_64": { id: "linux-x86_64", ...LINUX_GLIBC },
  "linux-aarch64": { id: "linux-aarch64", ...LINUX_GLIBC },
  // Apple arm64 passes every variadic argument on the stack, unlike the other rows.
  "darwin-aarch64": { id: "darwin-aarch64", variadic: "stack", ...DARWIN },
  "darwin-x86_64": { id: "darwin-x86_64", variadic: "registers", ...DARWIN },
} as const satisfies Record<string, PlatformTable>;

/** A supported platform key. */
export type PlatformId = keyof typeof PLATFORMS;

/** Returns the table for `os`/`arch` (default: this process), or throws `E_PLATFORM_UNSUPPORTED`. */
export function platformTable(os: string = Deno.build.os, arch: string = Deno.build.arch): PlatformTable {
  const id = `${os}-${arch}`;
  if (Object.hasOwn(PLATFORMS, id)) return PLATFORMS[id as PlatformId];
  throw new SpawnError("E_PLATFORM_UNSUPPORTED", `Platform "${id}" is not supported`, {
    details: { platform: id, supported: Object.keys(PLATFORMS) },
  });
}

/** A decoded `waitpid()` status. */
export type WaitStatus =
  | { readonly kind: "exited"; readonly code: number }
  | { readonly kind: "signaled"; readonly signal: number }
  | { readonly kind: "stopped"; readonly signal: number }
  | { readonly kind: "continued" };

/** Decodes a raw `waitpid()` status word using the platform's encoding (the W* macros). */
export function decodeWaitStatus(status: number, table: PlatformTable): WaitStatus {
  const low = status & 0x7f;
  const high = (status >> 8) & 0xff;
  switch (table.continued) {
    case "linux-0xffff":
      if (status === 0xffff) return { kind: "continued" };
      break;
    case "bsd-0x13-stopsig":
      if (low === 0x7f && high === 0x13) return { kind: "continued" };
      break;
    default: {
      const never: never = table.continued;
      throw new Error(`Unknown continued encoding "${String(never)}"`);
    }
  }
  if (low === 0) return { kind: "exited", code: high };
  if (low === 0x7f) return { kind: "stopped", signal: high };
  return { kind: "signaled", signal: low };
}

/** Maps a signal number back to its name on this platform, or `null` when Specter does not name it. */
export function signalName(signal: number, table: PlatformTable): SignalName | null {
  // The table's keys are exactly the signal names (`satisfies Record<SignalName, number>` below).
  for (const name of Object.keys(table.signals) as SignalName[]) {
    if (table.signals[name] === signal) return name;
  }
  return null;
}
