/**
 * The seccomp rules every sandboxed program runs under, as data. `src/sandbox/seccomp/` compiles them to
 * classic BPF for `bwrap --seccomp`; `describeRules()` prints them for auditors.
 *
 * Anything not listed is allowed: the filter is a deny list for kernel attack surface and
 * sandbox-escape primitives, on top of the namespaces, dropped capabilities and `NoNewPrivs` that
 * bubblewrap sets up. Each rule is tested in `src/sandbox/seccomp/compile_test.ts` (one test per rule and
 * architecture) and the important ones for real under bwrap in `tests/seccomp_real_test.ts`.
 *
 * Editing: one rule per syscall and filter (`when` splits a syscall's rule between filters); the syscall must be in `src/sandbox/seccomp/syscalls.ts`. A syscall an
 * architecture lacks (`null` there) is skipped on that architecture only.
 *
 * @module
 */
import type { SeccompRule } from "../src/sandbox/seccomp/rule.ts";

/** `CLONE_NEWUSER` from `<linux/sched.h>`. */
const CLONE_NEWUSER = { name: "CLONE_NEWUSER", value: 0x10000000 } as const;

/** Every seccomp rule (the compiler tests argument-filtered rules first; otherwise this order). */
export const SECCOMP_RULES = [
  // Reading or writing another process.
  { syscall: "ptrace", action: "EPERM", reason: "Tracing another process reads and changes its memory" },
  { syscall: "process_vm_readv", action: "EPERM", reason: "Reads another process's memory" },
  { syscall: "process_vm_writev", action: "EPERM", reason: "Writes another process's memory" },
  {
    syscall: "pidfd_getfd",
    action: "EPERM",
    reason: "Takes a copy of another process's descriptor (a shell's, say), with ptrace's rights",
  },

  // A setuid or setgid bit on a file the program made. Inside, every mount is nosuid, but on the host the
  // file is an ordinary setuid program of its owner: the caller (root's write grants store root as owner),
  // which any local user who can reach the grant would become. The mode argument is a plain integer, so
  // the filter sees it; openat2 carries it in memory the filter cannot read.
  ...setIdRules(),
  {
    syscall: "openat2",
    action: "ENOSYS",
    reason: "Its mode lives in memory a filter cannot read (a setuid file); ENOSYS makes callers use openat",
  },
  {
    syscall: "fcntl",
    action: "EPERM",
    condition: { kind: "equals_any", arg: 1, values: [{ name: "F_SETLEASE", value: 1024 }] },
    reason: "A lease on a file it may only read (a read-only bind of the caller's) stalls the host's writers",
  },

  // Mounts, namespaces and root changes: the sandbox's view of the filesystem is fixed by bwrap.
  { syscall: "mount", action: "EPERM", reason: "Changes the mount table the sandbox is built from" },
  { syscall: "umount2", action: "EPERM", reason: "Unmounting could uncover what the sandbox hides" },
  { syscall: "pivot_root", action: "EPERM", reason: "Changes the root filesystem" },
  { syscall: "chroot", action: "EPERM", reason: "Changes the root directory (classic chroot escapes)" },
  { syscall: "setns", action: "EPERM", reason: "Joins another namespace" },
  { syscall: "unshare", action: "EPERM", reason: "New namespaces (a user namespace regains capabilities)" },
  {
    syscall: "clone",
    action: "EPERM",
    condition: { kind: "any_bit_set", arg: 0, mask: CLONE_NEWUSER },
    reason: "A new user namespace regains every capability inside it; plain fork and threads stay allowed",
  },
  {
    syscall: "clone3",
    action: "ENOSYS",
    reason: "Its flags live in memory a filter cannot read; ENOSYS makes libc fall back to clone",
  },
  { syscall: "open_tree", action: "ENOSYS", reason: "New mount API: clones mount trees" },
  { syscall: "move_mount", action: "ENOSYS", reason: "New mount API: attaches mounts" },
  { syscall: "fsopen", action: "ENOSYS", reason: "New mount API: creates filesystem contexts" },
  { syscall: "fsconfig", action: "ENOSYS", reason: "New mount API: configures filesystem contexts" },
  { syscall: "fsmount", action: "ENOSYS", reason: "New mount API: creates mounts" },
  { syscall: "fspick", action: "ENOSYS", reason: "New mount API: reconfigures existing mounts" },
  {
    syscall: "mount_setattr",
    action: "ENOSYS",
    reason: "New mount API: changes mount flags (e.g. read-only)",
  },
  { syscall: "open_tree_attr", action: "ENOSYS", reason: "New mount API: open_tree with mount attributes" },

  // Loading code into the kernel or reaching large kernel attack surface.
  { syscall: "kexec_load", action: "EPERM", reason: "Loads a new kernel" },
  { syscall: "kexec_file_load", action: "EPERM", reason: "Loads a new kernel" },
  { syscall: "init_module", action: "EPERM", reason: "Loads a kernel module" },
  { syscall: "finit_module", action: "EPERM", reason: "Loads a kernel module" },
  { syscall: "delete_module", action: "EPERM", reason: "Unloads a kernel module" },
  { syscall: "bpf", action: "EPERM", reason: "eBPF programs and maps: large kernel attack surface" },
  {
    syscall: "perf_event_open",
    action: "EPERM",
    reason: "Performance counters: side channels, attack surface",
  },
  {
    syscall: "userfaultfd",
    action: "EPERM",
    reason: "Stalls kernel page faults, a staple of kernel exploits",
  },
  { syscall: "keyctl", action: "EPERM", reason: "Kernel keyrings are not namespaced" },
  { syscall: "add_key", action: "EPERM", reason: "Kernel keyrings are not namespaced" },
  { syscall: "request_key", action: "EPERM", reason: "Kernel keyrings are not namespaced" },
  { syscall: "io_uring_setup", action: "EPERM", reason: "io_uring performs I/O the filter never sees" },
  { syscall: "io_uring_enter", action: "EPERM", reason: "io_uring performs I/O the filter never sees" },
  { syscall: "io_uring_register", action: "EPERM", reason: "io_uring performs I/O the filter never sees" },
  {
    syscall: "personality",
    action: "EPERM",
    condition: {
      kind: "equals_none",
      arg: 0,
      values: [{ name: "PER_LINUX", value: 0 }, { name: "query", value: 0xffffffff }],
    },
    reason:
      "Other personalities turn off ASLR or change syscall semantics; PER_LINUX and the query stay allowed",
  },

  // Host-wide administration.
  { syscall: "acct", action: "EPERM", reason: "Process accounting to a file" },
  { syscall: "swapon", action: "EPERM", reason: "Host swap configuration" },
  { syscall: "swapoff", action: "EPERM", reason: "Host swap configuration" },
  { syscall: "reboot", action: "EPERM", reason: "Reboots the host" },
  { syscall: "syslog", action: "EPERM", reason: "The kernel log leaks kernel addresses and host activity" },
  { syscall: "quotactl", action: "EPERM", reason: "Filesystem quota administration" },
  { syscall: "quotactl_fd", action: "EPERM", reason: "Filesystem quota administration" },
  {
    syscall: "open_by_handle_at",
    action: "EPERM",
    reason: "Opens files by handle, bypassing the mount tree (the 'shocker' container escape)",
  },
  { syscall: "name_to_handle_at", action: "EPERM", reason: "Produces handles for open_by_handle_at" },
  { syscall: "iopl", action: "EPERM", reason: "Raw x86 port I/O" },
  { syscall: "ioperm", action: "EPERM", reason: "Raw x86 port I/O" },
  { syscall: "settimeofday", action: "EPERM", reason: "Sets the host clock" },
  { syscall: "clock_settime", action: "EPERM", reason: "Sets the host clock" },
  { syscall: "clock_adjtime", action: "EPERM", reason: "Adjusts the host clock" },
  { syscall: "adjtimex", action: "EPERM", reason: "Adjusts the host clock" },

  // Terminal input injection: the program's terminal is Specter's PTY, but it must not type into it.
  {
    syscall: "ioctl",
    action: "EPERM",
    condition: {
      kind: "equals_any",
      arg: 1,
      values: [{ name: "TIOCSTI", value: 0x5412 }, { name: "TIOCLINUX", value: 0x541C }],
    },
    reason: "Pushes input into a terminal (typed commands run outside the sandbox if it is the user's)",
  },

  // Socket families beyond local, IP and netlink (AF_PACKET sniffs and forges raw frames). Two rules,
  // one per filter: with host IPC closed (network off, no fs.sockets grant) AF_UNIX is refused too.
  {
    syscall: "socket",
    action: "EPERM",
    when: "unix_open",
    condition: {
      kind: "equals_none",
      arg: 0,
      values: [
        { name: "AF_UNIX", value: 1 },
        { name: "AF_INET", value: 2 },
        { name: "AF_INET6", value: 10 },
        { name: "AF_NETLINK", value: 16 },
      ],
    },
    reason: "Rarely used socket families are kernel attack surface; AF_PACKET gives raw network access",
  },
  {
    syscall: "socket",
    action: "EPERM",
    when: "unix_closed",
    condition: {
      kind: "equals_none",
      arg: 0,
      values: [
        { name: "AF_INET", value: 2 },
        { name: "AF_INET6", value: 10 },
        { name: "AF_NETLINK", value: 16 },
      ],
    },
    reason: "With network off no AF_UNIX socket may exist: connect() reaches any host pathname socket " +
      "visible in the sandbox, read-only bind or not (stream socketpairs stay allowed); rare families as above",
  },
  {
    syscall: "socketpair",
    action: "EPERM",
    when: "unix_closed",
    condition: {
      kind: "equals_any",
      arg: 1,
      values: [
        { name: "SOCK_DGRAM", value: 2 },
        { name: "SOCK_DGRAM|SOCK_NONBLOCK", value: 0x802 },
        { name: "SOCK_DGRAM|SOCK_CLOEXEC", value: 0x80002 },
        { name: "SOCK_DGRAM|SOCK_NONBLOCK|SOCK_CLOEXEC", value: 0x80802 },
      ],
    },
    reason: "With network off a datagram socket of a pair can still name a destination (sendto, a new " +
      "connect, bind after connect(AF_UNSPEC)) and reach a host pathname socket; stream and seqpacket " +
      "pairs stay connected to each other and are allowed",
  },
] as const satisfies readonly SeccompRule[];

/** The rules refusing a mode with S_ISUID or S_ISGID, one per call that takes a mode, at its index. */
function setIdRules(): SeccompRule[] {
  const mask = { name: "S_ISUID|S_ISGID", value: 0o6000 };
  const calls = [
    ["chmod", 1],
    ["fchmod", 1],
    ["fchmodat", 2],
    ["fchmodat2", 2],
    ["mknod", 1],
    ["mknodat", 2],
    ["open", 2],
    ["openat", 3],
    ["creat", 1],
  ] as const;
  return calls.map(([syscall, arg]) => ({
    syscall,
    action: "EPERM",
    condition: { kind: "any_bit_set", arg, mask },
    reason: "A setuid or setgid bit: on the host the file would run as its owner, the caller",
  }));
}
