/**
 * The seccomp-BPF compiler: turns the rule table in `profiles/seccomp_rules.ts` into the classic BPF
 * program `bwrap --seccomp FD` installs, plus an auditor's view of the rules, a disassembler and an
 * interpreter for tests.
 *
 * @example
 * ```ts
 * import { compileSeccomp, seccompArchFor } from "./src/sandbox/seccomp/mod.ts";
 *
 * const filter = compileSeccomp(seccompArchFor(Deno.build.arch), { network: false });
 * // Write `filter` to a file or pipe and pass it to bwrap as fd 3 with `--seccomp 3`.
 * ```
 *
 * @module
 */
export {
  AUDIT_ARCH,
  AUDIT_ARCH_I386,
  SECCOMP_ARCHES,
  type SeccompArch,
  seccompArchFor,
  X32_SYSCALL_BIT,
} from "./arch.ts";
export {
  compileRules,
  compileSeccomp,
  describeCondition,
  describeRuleList,
  describeRules,
  type RuleDescription,
  rulesFor,
  type SeccompOptions,
  unixSocketsOpen,
} from "./compile.ts";
export { describeReturn, disassemble } from "./disassemble.ts";
export {
  type FilterResult,
  filterReturnValue,
  runFilter,
  type SeccompDataInput,
  validateProgram,
} from "./interpret.ts";
export { BPF, decodeProgram, encodeProgram, SECCOMP_RET, type SockFilter } from "./bpf.ts";
export type { ArgIndex, NamedValue, RuleWhen, SeccompCondition, SeccompRule } from "./rule.ts";
export { ERRNO, type ErrnoName, type SyscallName, syscallNumber, SYSCALLS } from "./syscalls.ts";
