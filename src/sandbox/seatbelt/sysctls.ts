/**
 * The sysctls a sandboxed program may read (`sysctl-read`). Allowing every sysctl would hand out the
 * process table (`kern.proc.*`) and, through `kern.procargs2`, the arguments and environment of every
 * other process of the same user, secrets included. So only named system facts are readable: what
 * uname(3), CPU counting, page sizes and CPU feature detection ask for.
 *
 * @module
 */

/** One readable sysctl (or family, by prefix) and who asks for it. */
export interface Sysctl {
  /** `sysctl-name` (exactly this name) or `sysctl-name-prefix` (every name that starts with it). */
  readonly filter: "sysctl-name" | "sysctl-name-prefix";
  /** The name, or the prefix every matching name starts with. */
  readonly name: string;
  /** Who asks for it. */
  readonly why: string;
}

/** Readable in every profile. */
export const SYSCTLS = [
  { filter: "sysctl-name", name: "hw.activecpu", why: "CPU count for thread pools (sysconf, nproc)" },
  { filter: "sysctl-name", name: "hw.byteorder", why: "byte order checks in build tools" },
  {
    filter: "sysctl-name",
    name: "hw.cachelinesize",
    why: "allocators and runtimes that align to cache lines",
  },
  {
    filter: "sysctl-name",
    name: "hw.cpufamily",
    why: "CPU identification (uname -p, runtimes picking code paths)",
  },
  { filter: "sysctl-name", name: "hw.cpusubtype", why: "CPU identification (arch, uname -m)" },
  { filter: "sysctl-name", name: "hw.cputype", why: "CPU identification (arch, uname -m)" },
  { filter: "sysctl-name", name: "hw.logicalcpu", why: "CPU count (sysconf(_SC_NPROCESSORS_ONLN))" },
  { filter: "sysctl-name", name: "hw.logicalcpu_max", why: "CPU count (sysconf(_SC_NPROCESSORS_CONF))" },
  { filter: "sysctl-name", name: "hw.machine", why: "uname(3) machine field (uname -m)" },
  { filter: "sysctl-name", name: "hw.memsize", why: "physical memory size, for runtimes sizing their heaps" },
  { filter: "sysctl-name", name: "hw.model", why: "hardware model, printed by some version commands" },
  { filter: "sysctl-name", name: "hw.ncpu", why: "CPU count (the classic name)" },
  { filter: "sysctl-name", name: "hw.pagesize", why: "page size (getpagesize, allocators)" },
  {
    filter: "sysctl-name",
    name: "hw.pagesize_compat",
    why: "page size as seen by translated (Rosetta) programs",
  },
  {
    filter: "sysctl-name",
    name: "hw.physicalcpu",
    why: "physical core count (runtimes sizing worker pools)",
  },
  {
    filter: "sysctl-name",
    name: "hw.physicalcpu_max",
    why: "physical core count (runtimes sizing worker pools)",
  },
  {
    filter: "sysctl-name-prefix",
    name: "hw.optional.",
    why: "CPU feature detection (SIMD code paths in libraries)",
  },
  { filter: "sysctl-name-prefix", name: "hw.perflevel", why: "performance and efficiency core counts" },
  { filter: "sysctl-name", name: "kern.argmax", why: "largest argument list (xargs, getconf ARG_MAX)" },
  { filter: "sysctl-name", name: "kern.hostname", why: "uname(3) node name, gethostname(3), shell prompts" },
  {
    filter: "sysctl-name",
    name: "kern.maxfilesperproc",
    why: "open-file limit checks (getrlimit callers, runtimes)",
  },
  { filter: "sysctl-name", name: "kern.osproductversion", why: "the macOS version (sw_vers, runtimes)" },
  { filter: "sysctl-name", name: "kern.osrelease", why: "uname(3) release (uname -r)" },
  { filter: "sysctl-name", name: "kern.ostype", why: "uname(3) system name (uname -s)" },
  { filter: "sysctl-name", name: "kern.osvariant_status", why: "libSystem's os_variant checks at start-up" },
  { filter: "sysctl-name", name: "kern.osversion", why: "the OS build (uname -v, sw_vers)" },
  {
    filter: "sysctl-name",
    name: "kern.usrstack64",
    why: "stack location, read by some runtimes and debuggers",
  },
  { filter: "sysctl-name", name: "kern.version", why: "uname(3) version (uname -v)" },
  {
    filter: "sysctl-name",
    name: "sysctl.proc_cputype",
    why: "whether the program runs translated (Rosetta)",
  },
] as const satisfies readonly Sysctl[];
