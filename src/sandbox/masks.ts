/**
 * Masked kernel paths: host-wide files of `/proc` (and `/sys`) that tell a sandboxed program the host's
 * secrets, hidden like a container runtime hides them (runc/containerd/podman `maskedPaths`).
 *
 * The sandbox gets its own procfs (its own PID namespace), but many `/proc` files are not namespaced: they
 * describe the whole host (the kernel command line and build config, kernel symbols, interrupt counters
 * that time keystrokes, the physical memory map, the id of the host's boot). The sandbox's init, `/proc/1`,
 * is bwrap itself: its `exe` link opens and executes the host's bwrap binary (where the policy binds no
 * bwrap), and its `cmdline` is the whole launch plan. Each is covered at launch:
 * - `null`: a file, bind-mounted over by `/dev/null` read-only. The bind is `nodev` (bwrap binds so), so
 *   opening it fails with `EACCES`; nothing of the host's file can be read or written.
 * - `empty_dir`: a directory, covered by an empty read-only tmpfs.
 * - `read_only`: a directory bound read-only over itself (runc's `readonlyPaths`). Its files are root's,
 *   writable by their owner (global sysctls such as `kernel.core_pattern`, IRQ affinity), and root's
 *   sandbox is host uid 0 without capabilities: the owner's bits are all the kernel checks for many of them.
 *   bwrap covers `/proc/sys` only when it finds the directory writable at setup, which it is not then.
 * - `unmounted`: under `/sys`, which the sandbox never mounts and a policy may never grant
 *   (`FORBIDDEN_TREES` in `src/policy/path_safety.ts`); listed so the table is the whole story.
 *
 * Only paths present on the host are mounted over (bwrap cannot create a file in procfs): `hostFacts()`
 * records which are present, see {@link presentMasks}.
 *
 * @module
 */

/** How a masked path is covered (see the module doc). */
export type MaskKind = "null" | "empty_dir" | "read_only" | "unmounted";

/** One masked path. */
export interface MaskedPath {
  /** Absolute path inside the sandbox. */
  readonly path: string;
  /** How it is covered. */
  readonly kind: MaskKind;
  /** What it would tell the program. */
  readonly why: string;
}

/** Every masked path. runc's defaults, plus host-wide files this kernel shows to an unprivileged reader. */
export const MASKED_PATHS = [
  {
    path: "/proc/cmdline",
    kind: "null",
    why: "The kernel command line: boot parameters, root device, tokens",
  },
  { path: "/proc/config.gz", kind: "null", why: "The kernel's build configuration: which hardening is off" },
  { path: "/proc/bootconfig", kind: "null", why: "Boot-time kernel configuration" },
  { path: "/proc/kcore", kind: "null", why: "An image of the host's physical memory (runc)" },
  { path: "/proc/keys", kind: "null", why: "Kernel keyrings, which are not namespaced (runc)" },
  { path: "/proc/key-users", kind: "null", why: "Keyring usage per host uid" },
  { path: "/proc/timer_list", kind: "null", why: "Host-wide timers with task names (runc)" },
  { path: "/proc/timer_stats", kind: "null", why: "Host-wide timer statistics (runc)" },
  { path: "/proc/sched_debug", kind: "null", why: "Every task on the host with scheduler state (runc)" },
  { path: "/proc/latency_stats", kind: "null", why: "Host-wide latency tracing (runc)" },
  { path: "/proc/kallsyms", kind: "null", why: "Kernel symbols (addresses when kptr_restrict allows)" },
  { path: "/proc/modules", kind: "null", why: "Loaded kernel modules and their addresses" },
  { path: "/proc/interrupts", kind: "null", why: "Interrupt counters: a keystroke-timing side channel" },
  { path: "/proc/iomem", kind: "null", why: "The physical memory map" },
  { path: "/proc/ioports", kind: "null", why: "The I/O port map: host hardware" },
  { path: "/proc/sysrq-trigger", kind: "null", why: "Magic SysRq: reboots or crashes the host if writable" },
  {
    path: "/proc/sys/kernel/random/boot_id",
    kind: "null",
    why: "The host's boot id: one stable identifier of the host until it reboots, the same in every sandbox",
  },
  { path: "/proc/kmsg", kind: "null", why: "The kernel log (root-only: root's sandbox is uid 0)" },
  { path: "/proc/kpageflags", kind: "null", why: "Flags of every physical page: aids Rowhammer (root-only)" },
  { path: "/proc/kpagecount", kind: "null", why: "Mapping count of every physical page (root-only)" },
  { path: "/proc/kpagecgroup", kind: "null", why: "The cgroup of every physical page (root-only)" },
  { path: "/proc/pagetypeinfo", kind: "null", why: "Host-wide page allocator state (root-only)" },
  { path: "/proc/slabinfo", kind: "null", why: "Kernel heap (slab) state: aids heap exploits (root-only)" },
  { path: "/proc/vmallocinfo", kind: "null", why: "Kernel virtual addresses (root-only)" },
  { path: "/proc/acpi", kind: "empty_dir", why: "ACPI interfaces of the host (runc)" },
  { path: "/proc/asound", kind: "empty_dir", why: "The host's sound devices (runc)" },
  { path: "/proc/scsi", kind: "empty_dir", why: "The host's SCSI devices (runc)" },
  {
    path: "/proc/1",
    kind: "empty_dir",
    // A /dev/null bind over the `exe` link itself is refused by the kernel (EINVAL): the directory goes.
    why: "The sandbox's init, bwrap: its exe opens and runs the host's bwrap, its cmdline is the launch plan",
  },
  { path: "/proc/sys", kind: "read_only", why: "Global sysctls, writable by uid 0 (runc: read-only)" },
  { path: "/proc/irq", kind: "read_only", why: "IRQ affinity of the host's CPUs (runc: read-only)" },
  { path: "/proc/bus", kind: "read_only", why: "PCI configuration space (runc: read-only)" },
  { path: "/proc/fs", kind: "read_only", why: "Filesystem driver controls and statistics (runc: read-only)" },
  { path: "/sys/firmware", kind: "unmounted", why: "Firmware tables (ACPI, DMI, EFI variables) (runc)" },
  {
    path: "/sys/devices/virtual/powercap",
    kind: "unmounted",
    why: "RAPL energy counters: the Platypus power side channel (runc)",
  },
  { path: "/sys/fs/selinux", kind: "unmounted", why: "The host's SELinux policy (podman)" },
  { path: "/sys/kernel/debug", kind: "unmounted", why: "debugfs: kernel internals" },
] as const satisfies readonly MaskedPath[];

/** A path of {@link MASKED_PATHS}. */
export type MaskedPathName = (typeof MASKED_PATHS)[number]["path"];

/**
 * The masked paths present on this host (lstat; no read permission is needed), in table order.
 * `exists` is injectable for tests.
 */
export function presentMasks(exists: (path: string) => boolean = lexists): MaskedPathName[] {
  return MASKED_PATHS.filter((m) => m.kind !== "unmounted" && exists(m.path)).map((m) => m.path);
}

function lexists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false; // Absent (or unreachable): nothing to mask there.
  }
}

/**
 * The bwrap arguments that mask `present` (paths of {@link MASKED_PATHS}; `undefined` masks every
 * mountable entry, which fails loudly at start on a host lacking one, never silently). Must come after
 * `--proc /proc`.
 */
export function maskArgs(present: readonly string[] | undefined): string[] {
  const args: string[] = [];
  const masks = MASKED_PATHS.filter((mask) => present === undefined || present.includes(mask.path));
  // Read-only directories first: a file masked beneath one (its bind made later) stays masked.
  const ordered = [
    ...masks.filter((m) => m.kind === "read_only"),
    ...masks.filter((m) => m.kind !== "read_only"),
  ];
  for (const mask of ordered) {
    switch (mask.kind) {
      case "null":
        args.push("--ro-bind", "/dev/null", mask.path);
        break;
      case "empty_dir":
        args.push("--tmpfs", mask.path, "--remount-ro", mask.path);
        break;
      case "read_only":
        // The host's directory (bwrap binds from the host's root); its sysctls answer for the reader's
        // namespaces, so the sandbox still sees its own hostname and network settings, read-only.
        args.push("--ro-bind", mask.path, mask.path);
        break;
      case "unmounted":
        break; // /sys is never mounted: nothing to cover.
      default: {
        const never: never = mask;
        throw new RangeError(`Unknown mask ${JSON.stringify(never)}`);
      }
    }
  }
  return args;
}
