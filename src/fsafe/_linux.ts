/**
 * The Linux system calls behind `src/fsafe/`: `openat2` (through `syscall`, glibc has no wrapper),
 * `statx`, `read` and `close`, bound once with `Deno.dlopen`. Private to this folder.
 *
 * @module
 */
import { FileError } from "../errors.ts";

const SYMBOLS = {
  // long syscall(long nr, int dirfd, const char *path, struct open_how *how, size_t size)
  syscall_openat2: { name: "syscall", parameters: ["i64", "i64", "buffer", "buffer", "u64"], result: "i64" },
  openat: { parameters: ["i32", "buffer", "i32", "u32"], result: "i32" },
  statx: { parameters: ["i32", "buffer", "i32", "u32", "buffer"], result: "i32" },
  read: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  readlinkat: { parameters: ["i32", "buffer", "buffer", "usize"], result: "isize" },
  mkdirat: { parameters: ["i32", "buffer", "u32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  __errno_location: { parameters: [], result: "pointer" },
} as const satisfies Deno.ForeignLibraryInterface;

/** Open flags and numbers that differ between the two Linux architectures Specter supports. */
interface LinuxTable {
  readonly O_DIRECTORY: number;
  readonly O_NOFOLLOW: number;
}

/** `open(2)` flags per architecture (asm-generic for arm64; x86 has its own values for these two). */
export const LINUX_FLAGS: Readonly<Record<"x86_64" | "aarch64", LinuxTable>> = {
  x86_64: { O_DIRECTORY: 0o200000, O_NOFOLLOW: 0o400000 },
  aarch64: { O_DIRECTORY: 0o40000, O_NOFOLLOW: 0o100000 },
};

/** Flags shared by both architectures. */
export const O = {
  RDONLY: 0,
  NONBLOCK: 0o4000,
  CLOEXEC: 0o2000000,
  PATH: 0o10000000,
} as const;

/** `openat2` resolve flags (linux/openat2.h). */
export const RESOLVE = {
  NO_XDEV: 0x01,
  NO_MAGICLINKS: 0x02,
  NO_SYMLINKS: 0x04,
  BENEATH: 0x08,
} as const;

/** `openat2`'s number: 437 on every architecture (it was added after the tables were unified). */
export const SYS_OPENAT2 = 437;
/** `AT_FDCWD`. */
export const AT_FDCWD = -100;
/** `AT_EMPTY_PATH`: `statx` on the descriptor itself. */
export const AT_EMPTY_PATH = 0x1000;
/** `STATX_BASIC_STATS`. */
const STATX_BASIC_STATS = 0x7ff;

/** The errno values this folder tells apart (identical on x86-64 and arm64). */
export const ERRNO = {
  ENOENT: 2,
  EINTR: 4,
  EAGAIN: 11,
  EACCES: 13,
  EXDEV: 18,
  ENOTDIR: 20,
  EISDIR: 21,
  EINVAL: 22,
  ENOSYS: 38,
  ELOOP: 40,
  E2BIG: 7,
  ENXIO: 6,
  EEXIST: 17,
} as const;

interface Bound {
  readonly sym: Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];
  readonly flags: LinuxTable;
  readonly errno: () => number;
}

let bound: Bound | undefined;

/** The bound calls (throws `E_FFI`-like `FileError` off Linux or when libc cannot be loaded). */
export function linux(): Bound {
  if (bound) return bound;
  const arch = Deno.build.arch;
  if (Deno.build.os !== "linux" || (arch !== "x86_64" && arch !== "aarch64")) {
    throw new FileError(
      "E_FILE_UNSUPPORTED",
      `Descriptor-based path resolution is not available on "${Deno.build.os}"`,
    );
  }
  let lib: Deno.DynamicLibrary<typeof SYMBOLS>;
  try {
    lib = Deno.dlopen("libc.so.6", SYMBOLS);
  } catch (cause) {
    throw new FileError("E_FILE_UNSUPPORTED", 'Could not load "libc.so.6"', { cause });
  }
  const pointer = lib.symbols.__errno_location();
  if (pointer === null) throw new FileError("E_FILE_UNSUPPORTED", "The errno location is null");
  const view = new Deno.UnsafePointerView(pointer);
  bound = { sym: lib.symbols, flags: LINUX_FLAGS[arch], errno: () => view.getInt32() };
  return bound;
}

const encoder = new TextEncoder();

/** `path` as a NUL-terminated C string. */
export function cPath(path: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(encoder.encode(path).length + 1);
  encoder.encodeInto(path, bytes);
  return bytes;
}

/** The raw `struct statx` fields this folder reads. */
export interface RawStat {
  readonly mode: number;
  readonly uid: number;
  readonly size: number;
  /** Hard links to the inode. */
  readonly nlink: number;
  readonly ino: bigint;
  readonly devMajor: number;
  readonly devMinor: number;
}

/** `statx(fd, "", AT_EMPTY_PATH)`: the descriptor's own inode; returns errno on failure. */
export function statFd(fd: number): RawStat | number {
  const { sym, errno } = linux();
  const buffer = new Uint8Array(256);
  if (sym.statx(fd, EMPTY, AT_EMPTY_PATH, STATX_BASIC_STATS, buffer) !== 0) return errno();
  const view = new DataView(buffer.buffer);
  return {
    nlink: view.getUint32(16, true),
    uid: view.getUint32(20, true),
    mode: view.getUint16(28, true),
    ino: view.getBigUint64(32, true),
    size: Number(view.getBigUint64(40, true)),
    devMajor: view.getUint32(136, true),
    devMinor: view.getUint32(140, true),
  };
}

const EMPTY = new Uint8Array(1);
