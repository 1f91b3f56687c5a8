/**
 * The shape of one seccomp rule. The rules themselves are data in `profiles/seccomp_rules.ts`.
 *
 * Every condition compares the **low 32 bits** of one argument. That is exact, not an approximation: each
 * argument a rule filters is declared `int`/`unsigned int` in the kernel (`ioctl`'s `cmd`, `socket`'s
 * `family`, `personality`'s `persona`), or is cut to its low 32 bits before use (`clone`'s flags,
 * `lower_32_bits(clone_flags)`), so the high half is ignored by the kernel and must be ignored by the
 * filter too. Comparing all 64 bits would let `ioctl(fd, 0x100005412, …)` through (CVE-2019-10063).
 *
 * @module
 */
import type { ErrnoName, SyscallName } from "./syscalls.ts";

/** A constant with the name it has in the kernel headers, so tables and audits read like the source. */
export interface NamedValue {
  /** Header name, e.g. `TIOCSTI`. */
  readonly name: string;
  /** Its value (at most 32 bits). */
  readonly value: number;
}

/** Which syscall argument a condition looks at (`seccomp_data.args[i]`). */
export type ArgIndex = 0 | 1 | 2 | 3 | 4 | 5;

/** When a rule applies, judged on the low 32 bits of one argument. */
export type SeccompCondition =
  /** Applies when any bit of `mask` is set. */
  | { readonly kind: "any_bit_set"; readonly arg: ArgIndex; readonly mask: NamedValue }
  /** Applies when the value is one of `values`. */
  | { readonly kind: "equals_any"; readonly arg: ArgIndex; readonly values: readonly NamedValue[] }
  /** Applies when the value is none of `values` (an allowlist of argument values). */
  | { readonly kind: "equals_none"; readonly arg: ArgIndex; readonly values: readonly NamedValue[] };

/**
 * Which filters a rule is part of: `unix_closed` only when host IPC is closed (network off and no host
 * socket granted), `unix_open` only when it is not. See `SeccompOptions`.
 */
export type RuleWhen = "unix_closed" | "unix_open";

/** One rule: when `syscall` is called (and `condition`, if any, holds) it fails with `action`'s errno. */
export interface SeccompRule {
  /** The syscall; a rule for a syscall the architecture lacks is left out on that architecture. */
  readonly syscall: SyscallName;
  /** The errno the call fails with. `ENOSYS` makes libc fall back to an older, filterable call. */
  readonly action: ErrnoName;
  /** When absent the rule applies to every call. */
  readonly condition?: SeccompCondition;
  /** Which filters the rule is part of; absent: every filter. */
  readonly when?: RuleWhen;
  /** Why the call is denied, for auditors. */
  readonly reason: string;
}
