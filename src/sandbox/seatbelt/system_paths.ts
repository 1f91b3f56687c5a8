/**
 * The host paths every Seatbelt profile grants, whatever the policy: what ordinary command-line programs
 * need to load and run on macOS (the counterpart of bubblewrap's read-only system binds). Binary
 * directories are **not** here: like under bubblewrap, only the target and the policy's `exec` entries
 * can be executed or read.
 *
 * Seatbelt matches the resolved path of a file, so `/etc/…` is written `/private/etc/…` (and `/var/…`
 * `/private/var/…`). A `subpath` matches the path itself and everything under it; a `literal` only the
 * path itself.
 *
 * @module
 */

/** How a path is matched in SBPL. */
export type PathFilterKind = "literal" | "subpath";

/** One granted path and why programs need it. */
export interface SystemPath {
  /** `literal` (this path only) or `subpath` (this path and everything under it). */
  readonly filter: PathFilterKind;
  /** The resolved, absolute path. */
  readonly path: string;
  /** Why ordinary programs need it. */
  readonly why: string;
}

/** Read-only in every profile (`file-read*`). Keep it minimal; each entry is tested. */
export const SYSTEM_READ_PATHS = [
  {
    filter: "subpath",
    path: "/usr/lib",
    why: "dyld and the system libraries every program links (libSystem)",
  },
  { filter: "subpath", path: "/usr/share", why: "terminfo, locale and time-zone data, as under bubblewrap" },
  {
    filter: "subpath",
    path: "/System/Library",
    why: "system frameworks, the dyld shared cache before macOS 13, and SystemVersion.plist (sw_vers)",
  },
  {
    filter: "subpath",
    path: "/System/Volumes/Preboot/Cryptexes/OS",
    why: "the OS cryptex, where macOS 13 and later keep the dyld shared cache",
  },
  {
    filter: "subpath",
    path: "/private/var/db/timezone",
    why: "the zoneinfo tree /etc/localtime points into (localtime(3))",
  },
  {
    filter: "literal",
    path: "/private/etc/localtime",
    why: "the time zone (a symlink into /var/db/timezone)",
  },
  {
    filter: "literal",
    path: "/private/etc/passwd",
    why: "user names for programs that read the file directly",
  },
  {
    filter: "literal",
    path: "/private/etc/group",
    why: "group names for programs that read the file directly",
  },
  { filter: "literal", path: "/private/etc/zshenv", why: "zsh's system start-up file (when present)" },
  { filter: "literal", path: "/private/etc/zprofile", why: "zsh's system login file" },
  { filter: "literal", path: "/private/etc/zshrc", why: "zsh's system interactive start-up file" },
  { filter: "literal", path: "/private/etc/profile", why: "sh and bash system login file" },
  { filter: "literal", path: "/private/etc/bashrc", why: "bash's system interactive start-up file" },
  {
    filter: "literal",
    path: "/private/var/select/sh",
    why: "the link /bin/sh reads to choose the shell it runs (bash, zsh or dash)",
  },
  { filter: "literal", path: "/dev/zero", why: "zero bytes (dd, mmap of anonymous memory by old programs)" },
  { filter: "literal", path: "/dev/random", why: "random bytes" },
  { filter: "literal", path: "/dev/urandom", why: "random bytes (seeding hash tables, TLS, mktemp)" },
] as const satisfies readonly SystemPath[];

/** Read, write and ioctl in every profile: the null device and terminals. */
export const DEVICE_PATHS = [
  {
    filter: "literal",
    path: "/dev/null",
    why: "the null device, read and written by nearly every shell script",
  },
  {
    filter: "literal",
    path: "/dev/tty",
    why: "the controlling terminal (the session's PTY) by its generic name",
  },
  {
    filter: "literal",
    path: "/dev/ptmx",
    why: "the PTY multiplexer, for programs that open their own terminals (script, tmux)",
  },
  {
    filter: "subpath",
    path: "/dev/fd",
    why: "the program's own open files by number (bash and zsh process substitution)",
  },
] as const satisfies readonly SystemPath[];

/**
 * The PTY slaves (`/dev/ttys000`, …): the session's terminal is one of them, already open as the
 * program's stdio. A regex, because the plan is compiled before the PTY is opened.
 */
export const TTY_REGEX = "^/dev/ttys[0-9]+$";

/** Read-only only when the policy allows network: name resolution and TLS need them (bubblewrap's too). */
export const NETWORK_READ_PATHS = [
  { filter: "literal", path: "/private/etc/hosts", why: "static host names for the resolver" },
  { filter: "literal", path: "/private/etc/services", why: "service names to port numbers (getaddrinfo)" },
  { filter: "literal", path: "/private/etc/protocols", why: "protocol names to numbers (getprotobyname)" },
  { filter: "literal", path: "/private/etc/resolv.conf", why: "the resolver configuration (a symlink)" },
  {
    filter: "literal",
    path: "/private/var/run/resolv.conf",
    why: "the resolver configuration /etc/resolv.conf points to",
  },
  {
    filter: "subpath",
    path: "/private/etc/ssl",
    why: "the CA certificates of curl and OpenSSL-based programs",
  },
] as const satisfies readonly SystemPath[];
