/**
 * Compiles the seccomp rule table (`profiles/seccomp_rules.ts`) into a classic BPF program for
 * `bwrap --seccomp FD`.
 *
 * Layout (every jump is short and forward, so offsets stay within 8 bits however long the table gets):
 *
 * ```
 * ld [arch]; jeq AUDIT_ARCH ? next : kill_process
 * ld [nr]                                  ; x86_64 only: jge 0x40000000 ? errno(EPERM)   (x32 numbers)
 * per rule:  jeq nr ? body : skip body     ; body: [ld arg; compare…] ret errno / ret allow
 * ret allow
 * ```
 *
 * Rules with an argument condition come first: only they make the kernel run the filter on every call
 * (for syscalls whose verdict depends on `nr` and `arch` alone, kernels ≥ 5.11 cache the verdict), so
 * frequent calls such as `ioctl` meet few comparisons.
 *
 * @module
 */
import { SECCOMP_RULES } from "../../../profiles/seccomp_rules.ts";
import { SandboxError } from "../../errors.ts";
import { AUDIT_ARCH, type SeccompArch, seccompArchFor, X32_SYSCALL_BIT } from "./arch.ts";
import {
  argLowOffset,
  BPF,
  BPF_MAXINSNS,
  encodeProgram,
  jump,
  SECCOMP_DATA,
  SECCOMP_RET,
  type SockFilter,
  stmt,
} from "./bpf.ts";
import type { NamedValue, SeccompCondition, SeccompRule } from "./rule.ts";
import { ERRNO, syscallNumber } from "./syscalls.ts";

/** Options of {@link compileSeccomp}: what the policy allows that changes the filter. */
export interface SeccompOptions {
  /** Whether the policy allows network access (then AF_UNIX sockets are allowed too). */
  readonly network: boolean;
  /**
   * Whether the policy grants named host sockets (`fs.sockets`). With network off and no such grant, no
   * AF_UNIX socket can be created and no datagram `socketpair` (stream and seqpacket pairs still
   * work): nothing in the sandbox can connect or send to a host pathname socket, which a read-only bind
   * does not stop. Absent: false.
   */
  readonly hostSockets?: boolean;
}

/** Whether the filter for `options` lets programs create AF_UNIX sockets. */
export function unixSocketsOpen(options: SeccompOptions): boolean {
  return options.network || options.hostSockets === true;
}

/** The rules of `rules` that are part of the filter for `options` (see `SeccompRule.when`). */
export function rulesFor(rules: readonly SeccompRule[], options: SeccompOptions): SeccompRule[] {
  const when = unixSocketsOpen(options) ? "unix_open" : "unix_closed";
  return rules.filter((rule) => rule.when === undefined || rule.when === when);
}

/** One compiled rule, as {@link describeRules} reports it. */
export interface RuleDescription {
  /** Syscall name. */
  readonly syscall: string;
  /** Its number on the architecture described. */
  readonly nr: number;
  /** What the filter returns, e.g. `ERRNO(EPERM)`. */
  readonly action: string;
  /** When the rule applies, in words; `null` when it applies to every call. */
  readonly condition: string | null;
  /** Why the call is denied. */
  readonly reason: string;
}

const LD_W_ABS = BPF.LD | BPF.W | BPF.ABS;
const JEQ_K = BPF.JMP | BPF.JEQ | BPF.K;
const JGE_K = BPF.JMP | BPF.JGE | BPF.K;
const JSET_K = BPF.JMP | BPF.JSET | BPF.K;
const RET_K = BPF.RET | BPF.K;

/**
 * Compiles Specter's seccomp rules for `arch` into the bytes `bwrap --seccomp FD` reads (an array of
 * little-endian `struct sock_filter`).
 *
 * @throws {SandboxError} `E_SANDBOX_UNAVAILABLE` for an architecture other than x86_64 and aarch64.
 */
export function compileSeccomp(arch: SeccompArch, options: SeccompOptions): Uint8Array {
  return encodeProgram(compileRules(arch, SECCOMP_RULES, options));
}

/**
 * Compiles any rule list into instructions (the building block of {@link compileSeccomp}; tests use it
 * with synthetic tables).
 *
 * @throws {SandboxError} `E_SANDBOX_UNAVAILABLE` for an unknown architecture.
 * @throws {RangeError} for two rules on one syscall, a condition with too many values for 8-bit jumps,
 * or a program longer than the kernel accepts.
 */
export function compileRules(
  arch: SeccompArch,
  rules: readonly SeccompRule[],
  options: SeccompOptions,
): SockFilter[] {
  seccompArchFor(arch); // Callers may pass unchecked strings; an unknown one must not compile to anything.
  const program: SockFilter[] = [
    stmt(LD_W_ABS, SECCOMP_DATA.ARCH),
    jump(JEQ_K, AUDIT_ARCH[arch], 1, 0),
    stmt(RET_K, SECCOMP_RET.KILL_PROCESS),
    stmt(LD_W_ABS, SECCOMP_DATA.NR),
    ...x32Guard(arch),
  ];
  const seen = new Set<string>();
  for (const rule of orderRules(rulesFor(rules, options))) {
    if (seen.has(rule.syscall)) throw new RangeError(`Two seccomp rules for ${rule.syscall}`);
    seen.add(rule.syscall);
    const nr = syscallNumber(rule.syscall, arch);
    if (nr === null) continue; // The architecture has no such syscall: nothing to deny.
    const body = ruleBody(rule);
    program.push(jump(JEQ_K, nr, 0, body.length), ...body);
  }
  program.push(stmt(RET_K, SECCOMP_RET.ALLOW));
  if (program.length > BPF_MAXINSNS) {
    throw new RangeError(`Seccomp program has ${program.length} instructions, above ${BPF_MAXINSNS}`);
  }
  return program;
}

/** The rules compiled for `arch` and `options`, in filter order, as a table for auditors. */
export function describeRules(
  arch: SeccompArch,
  options: SeccompOptions = { network: false },
): readonly RuleDescription[] {
  return describeRuleList(arch, SECCOMP_RULES, options);
}

/** {@link describeRules} for any rule list. */
export function describeRuleList(
  arch: SeccompArch,
  rules: readonly SeccompRule[],
  options: SeccompOptions = { network: false },
): readonly RuleDescription[] {
  seccompArchFor(arch);
  const rows: RuleDescription[] = [];
  for (const rule of orderRules(rulesFor(rules, options))) {
    const nr = syscallNumber(rule.syscall, arch);
    if (nr === null) continue;
    rows.push({
      syscall: rule.syscall,
      nr,
      action: `ERRNO(${rule.action})`,
      condition: rule.condition === undefined ? null : describeCondition(rule.condition),
      reason: rule.reason,
    });
  }
  return rows;
}

/** The `SECCOMP_RET_ERRNO` return value a rule produces. */
export function ruleReturnValue(rule: SeccompRule): number {
  return (SECCOMP_RET.ERRNO | ERRNO[rule.action]) >>> 0;
}

/** Argument-filtered rules first (see the module doc), otherwise table order. */
function orderRules(rules: readonly SeccompRule[]): SeccompRule[] {
  return [
    ...rules.filter((r) => r.condition !== undefined),
    ...rules.filter((r) => r.condition === undefined),
  ];
}

/**
 * On x86_64, x32 syscalls carry `AUDIT_ARCH_X86_64` with bit 30 set in `nr`. Refusing every number at or
 * above it also refuses negative numbers, which no real syscall uses.
 */
function x32Guard(arch: SeccompArch): SockFilter[] {
  switch (arch) {
    case "x86_64":
      return [jump(JGE_K, X32_SYSCALL_BIT, 0, 1), stmt(RET_K, SECCOMP_RET.ERRNO | ERRNO.EPERM)];
    case "aarch64":
      return []; // No second ABI shares AUDIT_ARCH_AARCH64 (arm32 compat reports AUDIT_ARCH_ARM).
    default: {
      const unknown: never = arch;
      throw new SandboxError("E_SANDBOX_UNAVAILABLE", `No seccomp filter exists for ${String(unknown)}`);
    }
  }
}

/**
 * The instructions after a rule's `jeq nr`. Each body ends in `ret`, so loading an argument into the
 * accumulator (which then no longer holds `nr`) cannot affect later rules.
 */
function ruleBody(rule: SeccompRule): SockFilter[] {
  const deny = stmt(RET_K, ruleReturnValue(rule));
  const allow = stmt(RET_K, SECCOMP_RET.ALLOW);
  const condition = rule.condition;
  if (condition === undefined) return [deny];
  const load = stmt(LD_W_ABS, argLowOffset(condition.arg));
  switch (condition.kind) {
    case "any_bit_set":
      return [load, jump(JSET_K, condition.mask.value, 0, 1), deny, allow];
    case "equals_any": {
      // jeq v0..vn-1 → deny; then `ret allow` at n, `ret deny` at n+1 (counted from the first jeq).
      const n = condition.values.length;
      const tests = condition.values.map((v, i) => jump(JEQ_K, v.value, n - i, 0));
      return [load, ...tests, allow, deny];
    }
    case "equals_none": {
      // jeq v0..vn-1 → allow; then `ret deny` at n, `ret allow` at n+1.
      const n = condition.values.length;
      const tests = condition.values.map((v, i) => jump(JEQ_K, v.value, n - i, 0));
      return [load, ...tests, deny, allow];
    }
    default: {
      const unknown: never = condition;
      throw new RangeError(`Unknown seccomp condition ${JSON.stringify(unknown)}`);
    }
  }
}

/** A condition in words, e.g. `low 32 bits of arg1 are TIOCSTI (0x5412) or TIOCLINUX (0x541c)`. */
export function describeCondition(condition: SeccompCondition): string {
  const subject = `low 32 bits of arg${condition.arg}`;
  switch (condition.kind) {
    case "any_bit_set":
      return `${subject} have ${named(condition.mask)} set`;
    case "equals_any":
      return `${subject} are ${condition.values.map(named).join(" or ")}`;
    case "equals_none":
      return `${subject} are none of ${condition.values.map(named).join(", ")}`;
    default: {
      const unknown: never = condition;
      throw new RangeError(`Unknown seccomp condition ${JSON.stringify(unknown)}`);
    }
  }
}

function named(v: NamedValue): string {
  return `${v.name} (0x${(v.value >>> 0).toString(16)})`;
}
