/**
 * The mount API calls root mode needs (`open_tree`, `mount_setattr`, `move_mount`, `umount2`), through
 * `syscall` (glibc 2.36 has no wrappers for the first three), bound once with `Deno.dlopen`. Private to
 * this folder. Their numbers are the same on every architecture (added after the tables were unified).
 *
 * @module
 */
import { SandboxError } from "../errors.ts";

const SYMBOLS = {
  // long syscall(SYS_open_tree, int dfd, const char *path, unsigned int flags)
  syscall_open_tree: { name: "syscall", parameters: ["i64", "i64", "buffer", "u64"], result: "i64" },
  // long syscall(SYS_mount_setattr, int dfd, const char *path, unsigned int flags, struct mount_attr *, size_t)
  syscall_mount_setattr: {
    name: "syscall",
    parameters: ["i64", "i64", "buffer", "u64", "buffer", "u64"],
    result: "i64",
  },
  // long syscall(SYS_move_mount, int from_dfd, const char *from, int to_dfd, const char *to, unsigned int flags)
  syscall_move_mount: {
    name: "syscall",
    parameters: ["i64", "i64", "buffer", "i64", "buffer", "u64"],
    result: "i64",
  },
  umount2: { parameters: ["buffer", "i32"], result: "i32" },
  openat: { parameters: ["i32", "buffer", "i32", "u32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  __errno_location: { parameters: [], result: "pointer" },
} as const satisfies Deno.ForeignLibraryInterface;

/** Syscall numbers (generic: the same on x86_64 and aarch64). */
export const NR = { open_tree: 428n, move_mount: 429n, mount_setattr: 442n } as const;

/** Flags of the mount API (linux/mount.h, fcntl.h). */
export const MOUNT = {
  OPEN_TREE_CLONE: 1,
  OPEN_TREE_CLOEXEC: 0o2000000,
  AT_EMPTY_PATH: 0x1000,
  AT_FDCWD: -100,
  MOVE_MOUNT_F_EMPTY_PATH: 0x4,
  MOUNT_ATTR_IDMAP: 0x00100000,
  AT_RECURSIVE: 0x8000,
  MNT_DETACH: 2,
  UMOUNT_NOFOLLOW: 8,
  O_RDONLY: 0,
  O_CLOEXEC: 0o2000000,
  O_PATH: 0o10000000,
} as const;

interface Bound {
  readonly sym: Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];
  readonly errno: () => number;
}

let bound: Bound | undefined;

/** The bound calls; throws `E_SANDBOX_UNAVAILABLE` off Linux or when libc cannot be loaded. */
export function mountApi(): Bound {
  if (bound) return bound;
  if (Deno.build.os !== "linux") {
    throw new SandboxError("E_SANDBOX_UNAVAILABLE", `The mount API is not available on "${Deno.build.os}"`);
  }
  let lib: Deno.DynamicLibrary<typeof SYMBOLS>;
  try {
    lib = Deno.dlopen("libc.so.6", SYMBOLS);
  } catch (cause) {
    throw new SandboxError("E_SANDBOX_UNAVAILABLE", 'Could not load "libc.so.6"', { cause });
  }
  const pointer = lib.symbols.__errno_location();
  if (pointer === null) throw new SandboxError("E_SANDBOX_UNAVAILABLE", "The errno location is null");
  const view = new Deno.UnsafePointerView(pointer);
  bound = { sym: lib.symbols, errno: () => view.getInt32() };
  return bound;
}

const encoder = new TextEncoder();

/** `text` as a NUL-terminated C string. */
export function cString(text: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(encoder.encode(text).length + 1);
  encoder.encodeInto(text, bytes);
  return bytes;
}

/** `struct mount_attr` (linux/mount.h: attr_set, attr_clr, propagation, userns_fd; 32 bytes). */
export function mountAttr(attrSet: number, usernsFd: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(32);
  const view = new DataView(bytes.buffer);
  view.setBigUint64(0, BigInt(attrSet), true);
  view.setBigUint64(24, BigInt(usernsFd), true);
  return bytes;
}
