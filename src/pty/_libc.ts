/**
 * The libc binding: `Deno.dlopen` of the platform's C library with every symbol the PTY layer calls.
 * Private to `src/pty/`; use the wrappers in `pty.ts`, `spawn.ts`, `reactor.ts` and `process.ts`.
 *
 * @module
 */
import { SpawnError } from "../errors.ts";
import { type PlatformTable, platformTable } from "./platform.ts";

// Eight integer registers precede the stack on Apple arm64. Padding the fixed arguments to eight makes
// the ninth (the variadic one) land in the first stack slot, where va_arg looks for it.
const STACK_PAD = ["i64", "i64", "i64", "i64", "i64", "i64"] as const;

const SYMBOLS = {
  openpty: { parameters: ["buffer", "buffer", "buffer", "pointer", "buffer"], result: "i32", optional: true },
  fcntl: { parameters: ["i32", "i32", "i32"], result: "i32" },
  fcntl_stack: { name: "fcntl", parameters: ["i32", "i32", ...STACK_PAD, "i32"], result: "i32" },
  ioctl: { parameters: ["i32", "u64", "buffer"], result: "i32" },
  ioctl_stack: { name: "ioctl", parameters: ["i32", "u64", ...STACK_PAD, "buffer"], result: "i32" },
  read: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  // Called with (path, flags, 0): no mode is ever needed (no O_CREAT), so no variadic argument matters.
  open: { parameters: ["buffer", "i32", "i32"], result: "i32" },
  write: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  close: { parameters: ["i32"], result: "i32" },
  pipe: { parameters: ["buffer"], result: "i32" },
  socketpair: { parameters: ["i32", "i32", "i32", "buffer"], result: "i32" },
  sendmsg: { parameters: ["i32", "buffer", "i32"], result: "isize" },
  recvmsg: { parameters: ["i32", "buffer", "i32"], result: "isize" },
  getsockopt: { parameters: ["i32", "i32", "i32", "buffer", "buffer"], result: "i32" },
  socket: { parameters: ["i32", "i32", "i32"], result: "i32" },
  bind: { parameters: ["i32", "buffer", "u32"], result: "i32" },
  listen: { parameters: ["i32", "i32"], result: "i32" },
  accept4: { parameters: ["i32", "pointer", "pointer", "i32"], result: "i32", optional: true },
  connect: { parameters: ["i32", "buffer", "u32"], result: "i32" },
  shutdown: { parameters: ["i32", "i32"], result: "i32" },
  flock: { parameters: ["i32", "i32"], result: "i32" },
  // The one call that blocks: run off the JS thread, and only ever one at a time (see reactor.ts).
  poll: { parameters: ["buffer", "u64", "i32"], result: "i32", nonblocking: true },
  poll_now: { name: "poll", parameters: ["buffer", "u64", "i32"], result: "i32" },
  kill: { parameters: ["i32", "i32"], result: "i32" },
  getsid: { parameters: ["i32"], result: "i32" },
  // Linux (glibc 2.36+): a descriptor for one process, so a signal never reaches one that reused its pid.
  pidfd_open: { parameters: ["i32", "u32"], result: "i32", optional: true },
  pidfd_send_signal: { parameters: ["i32", "i32", "pointer", "u32"], result: "i32", optional: true },
  // Linux only (variadic in glibc; every argument is an integer register on the platforms we run on).
  prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32", optional: true },
  access: { parameters: ["buffer", "i32"], result: "i32" },
  // Linux only: the calling thread enters a namespace (net_listen.ts: one listener in a sandbox's network).
  setns: { parameters: ["i32", "i32"], result: "i32", optional: true },
  waitpid: { parameters: ["i32", "buffer", "i32"], result: "i32" },
  getrlimit: { parameters: ["i32", "buffer"], result: "i32" },
  setrlimit: { parameters: ["i32", "buffer"], result: "i32" },
  sigemptyset: { parameters: ["buffer"], result: "i32" },
  sigfillset: { parameters: ["buffer"], result: "i32" },
  posix_spawnp: {
    parameters: ["buffer", "buffer", "buffer", "buffer", "buffer", "buffer"],
    result: "i32",
  },
  posix_spawn_file_actions_init: { parameters: ["buffer"], result: "i32" },
  posix_spawn_file_actions_destroy: { parameters: ["buffer"], result: "i32" },
  posix_spawn_file_actions_addopen: { parameters: ["buffer", "i32", "buffer", "i32", "u32"], result: "i32" },
  posix_spawn_file_actions_adddup2: { parameters: ["buffer", "i32", "i32"], result: "i32" },
  posix_spawn_file_actions_addclose: { parameters: ["buffer", "i32"], result: "i32" },
  posix_spawn_file_actions_addchdir_np: { parameters: ["buffer", "buffer"], result: "i32", optional: true },
  posix_spawn_file_actions_addclosefrom_np: { parameters: ["buffer", "i32"], result: "i32", optional: true },
  posix_spawnattr_init: { parameters: ["buffer"], result: "i32" },
  posix_spawnattr_destroy: { parameters: ["buffer"], result: "i32" },
  posix_spawnattr_setflags: { parameters: ["buffer", "i16"], result: "i32" },
  posix_spawnattr_setsigdefault: { parameters: ["buffer", "buffer"], result: "i32" },
  posix_spawnattr_setsigmask: { parameters: ["buffer", "buffer"], result: "i32" },
  __errno_location: { parameters: [], result: "pointer", optional: true },
  __error: { parameters: [], result: "pointer", optional: true },
} as const satisfies Deno.ForeignLibraryInterface;

const OPENPTY_ONLY = { openpty: SYMBOLS.openpty } as const satisfies Deno.ForeignLibraryInterface;

/** The loaded C library. */
export interface Libc {
  /** The bound symbols. */
  readonly sym: Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];
  /** `openpty`, from libc or, on older glibc, libutil. */
  readonly openpty: NonNullable<Deno.DynamicLibrary<typeof OPENPTY_ONLY>["symbols"]["openpty"]>;
  /** The platform table in force. */
  readonly table: PlatformTable;
  /** The calling (JS) thread's current `errno`. */
  errno(): number;
  /** `fcntl(fd, cmd, arg)` honouring the platform's variadic convention. */
  fcntl(fd: number, cmd: number, arg: number): number;
  /** `ioctl(fd, request, argp)` honouring the platform's variadic convention. */
  ioctl(fd: number, request: number, argp: Uint8Array): number;
}

let loaded: Libc | undefined;

function openFirst<S extends Deno.ForeignLibraryInterface>(
  names: readonly string[],
  symbols: S,
): Deno.DynamicLibrary<S> | undefined {
  for (const name of names) {
    try {
      return Deno.dlopen(name, symbols);
    } catch {
      // Try the next candidate name; the caller reports when none loads.
    }
  }
  return undefined;
}

/** Loads libc once per process (throws `E_FFI` or `E_PLATFORM_UNSUPPORTED`). */
export function libc(): Libc {
  if (loaded) return loaded;
  const table = platformTable();
  const lib = openFirst(table.libc, SYMBOLS);
  if (!lib) {
    throw new SpawnError("E_FFI", `Could not load the C library (tried ${table.libc.join(", ")})`, {
      details: { tried: table.libc },
    });
  }
  const sym = lib.symbols;
  const openpty = sym.openpty ?? openFirst(table.libutil, OPENPTY_ONLY)?.symbols.openpty;
  const errnoFn = sym[table.errnoFunction];
  if (!openpty || !errnoFn) {
    throw new SpawnError("E_FFI", `The C library lacks "${!openpty ? "openpty" : table.errnoFunction}"`);
  }
  const errnoPtr = errnoFn();
  if (errnoPtr === null) throw new SpawnError("E_FFI", "The errno location is null");
  // errno lives at a fixed per-thread address; every synchronous call runs on the JS thread.
  const errnoView = new Deno.UnsafePointerView(errnoPtr);
  const stack = table.variadic === "stack";
  loaded = {
    sym,
    openpty,
    table,
    errno: () => errnoView.getInt32(),
    fcntl: (fd, cmd, arg) =>
      stack ? sym.fcntl_stack(fd, cmd, 0n, 0n, 0n, 0n, 0n, 0n, arg) : sym.fcntl(fd, cmd, arg),
    ioctl: (fd, request, argp) =>
      stack
        ? sym.ioctl_stack(fd, BigInt(request), 0n, 0n, 0n, 0n, 0n, 0n, argp)
        : sym.ioctl(fd, BigInt(request), argp),
  };
  return loaded;
}

const encoder = new TextEncoder();

/** Encodes `s` as a NUL-terminated C string. */
export function cString(s: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(encoder.encode(s).length + 1);
  encoder.encodeInto(s, bytes);
  return bytes;
}

/** Builds a NULL-terminated `char *[]` over `strings`; keep `strings` alive while the array is used. */
export function pointerArray(strings: readonly Uint8Array<ArrayBuffer>[]): Uint8Array<ArrayBuffer> {
  const array = new BigUint64Array(strings.length + 1);
  strings.forEach((s, i) => {
    array[i] = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(s)));
  });
  return new Uint8Array(array.buffer);
}

/** Closes `fd`, ignoring errors (used on cleanup paths where the fd may already be gone). */
export function closeQuietly(fd: number): void {
  if (fd >= 0) libc().sym.close(fd);
}
