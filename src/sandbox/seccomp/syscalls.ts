/**
 * Syscall numbers for the syscalls the seccomp rules name (plus a few harmless ones tests use), per
 * architecture, and the errno values a rule can return.
 *
 * x86_64 numbers come from `arch/x86/entry/syscalls/syscall_64.tbl` (the `common`/`64` rows); aarch64
 * uses the generic table, `include/uapi/asm-generic/unistd.h`. `null` means the syscall does not exist on
 * that architecture, so no rule is compiled for it there. `syscalls_test.ts` checks both columns against
 * this machine's kernel headers.
 *
 * @module
 */
import type { SeccompArch } from "./arch.ts";

/** Syscall name → number on each architecture (`null`: absent there). */
export const SYSCALLS = {
  // Harmless calls, used by tests as "must stay allowed".
  read: { x86_64: 0, aarch64: 63 },
  write: { x86_64: 1, aarch64: 64 },
  close: { x86_64: 3, aarch64: 57 },
  getpid: { x86_64: 39, aarch64: 172 },
  socketpair: { x86_64: 53, aarch64: 199 },
  // Called with argument filters.
  ioctl: { x86_64: 16, aarch64: 29 },
  socket: { x86_64: 41, aarch64: 198 },
  clone: { x86_64: 56, aarch64: 220 },
  personality: { x86_64: 135, aarch64: 92 },
  // Other processes' memory.
  ptrace: { x86_64: 101, aarch64: 117 },
  process_vm_readv: { x86_64: 310, aarch64: 270 },
  process_vm_writev: { x86_64: 311, aarch64: 271 },
  pidfd_getfd: { x86_64: 438, aarch64: 438 },
  // Setting a setuid or setgid bit (filtered on the mode argument), file leases.
  chmod: { x86_64: 90, aarch64: null },
  fchmod: { x86_64: 91, aarch64: 52 },
  fchmodat: { x86_64: 268, aarch64: 53 },
  fchmodat2: { x86_64: 452, aarch64: 452 },
  mknod: { x86_64: 133, aarch64: null },
  mknodat: { x86_64: 259, aarch64: 33 },
  open: { x86_64: 2, aarch64: null },
  openat: { x86_64: 257, aarch64: 56 },
  creat: { x86_64: 85, aarch64: null },
  openat2: { x86_64: 437, aarch64: 437 },
  fcntl: { x86_64: 72, aarch64: 25 },
  // Mounts and namespaces.
  mount: { x86_64: 165, aarch64: 40 },
  umount2: { x86_64: 166, aarch64: 39 },
  pivot_root: { x86_64: 155, aarch64: 41 },
  chroot: { x86_64: 161, aarch64: 51 },
  setns: { x86_64: 308, aarch64: 268 },
  unshare: { x86_64: 272, aarch64: 97 },
  clone3: { x86_64: 435, aarch64: 435 },
  open_tree: { x86_64: 428, aarch64: 428 },
  move_mount: { x86_64: 429, aarch64: 429 },
  fsopen: { x86_64: 430, aarch64: 430 },
  fsconfig: { x86_64: 431, aarch64: 431 },
  fsmount: { x86_64: 432, aarch64: 432 },
  fspick: { x86_64: 433, aarch64: 433 },
  mount_setattr: { x86_64: 442, aarch64: 442 },
  open_tree_attr: { x86_64: 467, aarch64: 467 },
  // Kernel code and kernel-wide state.
  kexec_load: { x86_64: 246, aarch64: 104 },
  kexec_file_load: { x86_64: 320, aarch64: 294 },
  init_module: { x86_64: 175, aarch64: 105 },
  finit_module: { x86_64: 313, aarch64: 273 },
  delete_module: { x86_64: 176, aarch64: 106 },
  bpf: { x86_64: 321, aarch64: 280 },
  perf_event_open: { x86_64: 298, aarch64: 241 },
  userfaultfd: { x86_64: 323, aarch64: 282 },
  keyctl: { x86_64: 250, aarch64: 219 },
  add_key: { x86_64: 248, aarch64: 217 },
  request_key: { x86_64: 249, aarch64: 218 },
  io_uring_setup: { x86_64: 425, aarch64: 425 },
  io_uring_enter: { x86_64: 426, aarch64: 426 },
  io_uring_register: { x86_64: 427, aarch64: 427 },
  acct: { x86_64: 163, aarch64: 89 },
  swapon: { x86_64: 167, aarch64: 224 },
  swapoff: { x86_64: 168, aarch64: 225 },
  reboot: { x86_64: 169, aarch64: 142 },
  syslog: { x86_64: 103, aarch64: 116 },
  quotactl: { x86_64: 179, aarch64: 60 },
  quotactl_fd: { x86_64: 443, aarch64: 443 },
  open_by_handle_at: { x86_64: 304, aarch64: 265 },
  name_to_handle_at: { x86_64: 303, aarch64: 264 },
  // x86 port I/O; arm64 has no such syscalls.
  iopl: { x86_64: 172, aarch64: null },
  ioperm: { x86_64: 173, aarch64: null },
  // Clock setters.
  settimeofday: { x86_64: 164, aarch64: 170 },
  clock_settime: { x86_64: 227, aarch64: 112 },
  clock_adjtime: { x86_64: 305, aarch64: 266 },
  adjtimex: { x86_64: 159, aarch64: 171 },
} as const satisfies Record<string, Readonly<Record<SeccompArch, number | null>>>;

/** A syscall the table knows. */
export type SyscallName = keyof typeof SYSCALLS;

/** The syscall's number on `arch`, or `null` when the architecture has no such syscall. */
export function syscallNumber(name: SyscallName, arch: SeccompArch): number | null {
  return SYSCALLS[name][arch];
}

/**
 * The errno values a rule can return. x86_64 and aarch64 share `asm-generic/errno-base.h` and
 * `asm-generic/errno.h`, so one column serves both.
 */
export const ERRNO = {
  EPERM: 1,
  ENOSYS: 38,
} as const;

/** An errno a rule can return. */
export type ErrnoName = keyof typeof ERRNO;
