/**
 * The Mach services a sandboxed program may look up (`mach-lookup`). On macOS many libc functions are
 * clients of system daemons reached over Mach IPC; each allowed service is a door out of the sandbox,
 * so the list is minimal and every entry says which ordinary functions need it.
 *
 * Deliberately absent: `com.apple.logd`/`diagnosticd` (os_log messages are dropped, programs go on),
 * `com.apple.cfprefsd.*` (preferences), launch services, the pasteboard, the keychain
 * (`com.apple.SecurityServer`) and anything that starts or controls other processes.
 *
 * @module
 */

/** One Mach service and why programs need it. */
export interface MachService {
  /** The global name looked up with `bootstrap_look_up`. */
  readonly name: string;
  /** Which ordinary functions need it. */
  readonly why: string;
}

/** Looked up by ordinary command-line programs; allowed in every profile. */
export const MACH_SERVICES = [
  {
    name: "com.apple.system.opendirectoryd.libinfo",
    why: "getpwuid/getpwnam/getgrgid: user and group lookups (whoami, ls -l, ~ in shells)",
  },
  {
    name: "com.apple.system.opendirectoryd.membership",
    why: "group membership (mbr_* and getgrouplist): id, groups, and permission checks in tools",
  },
  {
    name: "com.apple.system.notification_center",
    why: "notify(3), which libc uses to notice time-zone and configuration changes (localtime)",
  },
] as const satisfies readonly MachService[];

/** Allowed only when the policy allows network: resolver and proxy configuration, certificate trust. */
export const NETWORK_MACH_SERVICES = [
  {
    name: "com.apple.SystemConfiguration.DNSConfiguration",
    why: "the resolver configuration getaddrinfo reads (dnsinfo)",
  },
  {
    name: "com.apple.SystemConfiguration.configd",
    why: "network and proxy configuration (SCDynamicStore) read by curl and other clients",
  },
  {
    name: "com.apple.trustd.agent",
    why: "TLS certificate evaluation for programs that use the Security framework",
  },
] as const satisfies readonly MachService[];
