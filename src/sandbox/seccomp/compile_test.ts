import assert from "node:assert/strict";
import { SECCOMP_RULES } from "../../../profiles/seccomp_rules.ts";
import { SandboxError } from "../../errors.ts";
import { AUDIT_ARCH, AUDIT_ARCH_I386, SECCOMP_ARCHES, type SeccompArch, X32_SYSCALL_BIT } from "./arch.ts";
import { BPF, BPF_MAXINSNS, decodeProgram, SECCOMP_RET } from "./bpf.ts";
import {
  compileRules,
  compileSeccomp,
  describeRuleList,
  describeRules,
  rulesFor,
  type SeccompOptions,
} from "./compile.ts";
import { type FilterResult, runFilter, validateProgram } from "./interpret.ts";
import type { SeccompCondition, SeccompRule } from "./rule.ts";
import { ERRNO, type SyscallName, syscallNumber, SYSCALLS } from "./syscalls.ts";

const RULES: readonly SeccompRule[] = SECCOMP_RULES;
const ALLOW: FilterResult = { action: "allow" };
const EPERM: FilterResult = { action: "errno", errno: ERRNO.EPERM };
const ENOSYS: FilterResult = { action: "errno", errno: ERRNO.ENOSYS };
const HARMLESS: readonly SyscallName[] = ["read", "write", "close", "getpid"];
/** Rules left out per architecture because the syscall does not exist there. */
const SKIPPED: Record<SeccompArch, readonly SyscallName[]> = {
  x86_64: [],
  aarch64: ["chmod", "mknod", "open", "creat", "iopl", "ioperm"],
};
/** Junk in the arguments a rule does not look at, to show they are ignored. */
const JUNK = 0xDEADBEEF_CAFEF00Dn;
const HIGH = 0xFFFFFFFF_00000000n;

const programs = Object.fromEntries(
  SECCOMP_ARCHES.map((arch) => [arch, compileSeccomp(arch, { network: false })]),
) as Record<SeccompArch, Uint8Array>;

/** The three policy shapes that choose a filter: network off, off with a host socket granted, on. */
const CLOSED: SeccompOptions = { network: false };
const GRANTED: SeccompOptions = { network: false, hostSockets: true };
const NETWORK: SeccompOptions = { network: true };

/** Options under which `rule` is part of the filter. */
function optionsFor(rule: SeccompRule): SeccompOptions {
  return rule.when === "unix_open" ? NETWORK : CLOSED;
}

function call(
  arch: SeccompArch,
  name: SyscallName,
  args: readonly bigint[] = [],
  options: SeccompOptions = CLOSED,
): FilterResult {
  const nr = syscallNumber(name, arch);
  assert.ok(nr !== null, `${name} exists on ${arch}`);
  const program = options === CLOSED ? programs[arch] : compileSeccomp(arch, options);
  return runFilter(program, { nr, arch: AUDIT_ARCH[arch], args });
}

/** Six arguments: `value` at `index`, junk elsewhere. */
function argsWith(index: number, value: bigint): bigint[] {
  return [0, 1, 2, 3, 4, 5].map((i) => (i === index ? value : JUNK));
}

/** Argument vectors the rule must deny and ones it must allow, derived from its condition. */
function cases(condition: SeccompCondition | undefined): { deny: bigint[][]; allow: bigint[][] } {
  if (condition === undefined) {
    return { deny: [[], [0n, 0n, 0n, 0n, 0n, 0n], argsWith(0, JUNK), argsWith(5, -1n)], allow: [] };
  }
  const at = (value: bigint): bigint[] => argsWith(condition.arg, value);
  switch (condition.kind) {
    case "any_bit_set": {
      const mask = BigInt(condition.mask.value);
      return {
        // The kernel ignores the high half, so bits there neither trigger nor hide the rule.
        deny: [at(mask), at(mask | 0x11n), at(mask | HIGH), at(0xFFFFFFFFn)],
        allow: [at(0n), at(0xFFFFFFFFn ^ mask), at(mask << 32n), at(HIGH)],
      };
    }
    case "equals_any": {
      const values = condition.values.map((v) => BigInt(v.value));
      const others = [0n, 1n, 0xFFFFFFFFn, ...values.map((v) => v + 1n), ...values.map((v) => v << 32n)]
        .filter((v) => !values.includes(v & 0xFFFFFFFFn));
      return {
        deny: values.flatMap((v) => [at(v), at(v | 0x1_00000000n), at(v | HIGH)]),
        allow: others.map(at),
      };
    }
    case "equals_none": {
      const values = condition.values.map((v) => BigInt(v.value));
      const others = [0n, 1n, 3n, 17n, 0x7FFFFFFFn, 0xFFFFFFFEn, 0xFFFFFFFFn, HIGH | 17n]
        .filter((v) => !values.includes(v & 0xFFFFFFFFn));
      return {
        deny: others.map(at),
        allow: values.flatMap((v) => [at(v), at(v | 0x1_00000000n), at(v | HIGH)]),
      };
    }
    default: {
      const unknown: never = condition;
      throw new Error(`Unknown condition ${JSON.stringify(unknown)}`);
    }
  }
}

// One test per rule and architecture, generated from the table.
for (const arch of SECCOMP_ARCHES) {
  for (const rule of RULES) {
    const nr = syscallNumber(rule.syscall, arch);
    const label = nr === null ? "absent here, skipped" : `ERRNO(${rule.action})`;
    const when = rule.when === undefined ? "" : ` [${rule.when}]`;
    Deno.test(`seccomp rule ${arch}: ${rule.syscall} (${nr})${when} → ${label}`, () => {
      const options = optionsFor(rule);
      if (nr === null) {
        assert.ok(
          SKIPPED[arch].includes(rule.syscall),
          `${rule.syscall} may only be skipped where it is absent`,
        );
        assert.ok(!describeRules(arch, options).some((row) => row.syscall === rule.syscall));
        return;
      }
      const denied: FilterResult = { action: "errno", errno: ERRNO[rule.action] };
      const { deny, allow } = cases(rule.condition);
      assert.ok(deny.length > 0);
      for (const args of deny) {
        assert.deepEqual(
          call(arch, rule.syscall, args, options),
          denied,
          `${rule.syscall}(${args.join(", ")})`,
        );
      }
      for (const args of allow) {
        assert.deepEqual(
          call(arch, rule.syscall, args, options),
          ALLOW,
          `${rule.syscall}(${args.join(", ")})`,
        );
      }
      // The same arguments on a harmless syscall are allowed: the rule is keyed on this syscall only.
      for (const harmless of HARMLESS) {
        for (const args of [...deny, ...allow]) {
          assert.deepEqual(call(arch, harmless, args, options), ALLOW, harmless);
        }
      }
      const row = describeRules(arch, options).find((r) => r.syscall === rule.syscall);
      assert.deepEqual(row && { nr: row.nr, action: row.action }, { nr, action: `ERRNO(${rule.action})` });
    });
  }
}

for (const arch of SECCOMP_ARCHES) {
  const TIOCSTI = 0x5412n;
  const TIOCLINUX = 0x541Cn;

  Deno.test(`${arch}: ioctl TIOCSTI and TIOCLINUX are denied, also with high bits set (CVE-2019-10063)`, () => {
    for (const cmd of [TIOCSTI, TIOCLINUX]) {
      for (const variant of [cmd, cmd | 0x1_00000000n, cmd | HIGH, cmd | 0x80000000_00000000n]) {
        assert.deepEqual(call(arch, "ioctl", [0n, variant, 0n]), EPERM, `0x${variant.toString(16)}`);
        assert.deepEqual(call(arch, "ioctl", [3n, variant, JUNK]), EPERM, `0x${variant.toString(16)}`);
      }
    }
    assert.deepEqual(call(arch, "ioctl", [0n, 0x1_00005412n, 0n]), EPERM);
    assert.deepEqual(call(arch, "ioctl", [0n, 0xFFFFFFFF_00005412n, 0n]), EPERM);
  });

  Deno.test(`${arch}: other ioctls are allowed`, () => {
    for (const cmd of [0x5401n, /* TCGETS */ 0x5414n, /* TIOCSWINSZ */ 0x5413n, /* TIOCGWINSZ */ 0x5411n]) {
      assert.deepEqual(call(arch, "ioctl", [0n, cmd, 0n]), ALLOW, `0x${cmd.toString(16)}`);
    }
    // TIOCSTI in the high half only is a different command once the kernel truncates it to 32 bits.
    assert.deepEqual(call(arch, "ioctl", [0n, TIOCSTI << 32n, 0n]), ALLOW);
    // TIOCSTI as the fd or the third argument is not the command.
    assert.deepEqual(call(arch, "ioctl", [TIOCSTI, 0x5401n, TIOCSTI]), ALLOW);
  });

  Deno.test(`${arch}: clone with CLONE_NEWUSER is denied, without it allowed`, () => {
    const SIGCHLD = 17n;
    const CLONE_NEWUSER = 0x10000000n;
    const threadFlags = 0x3D0F00n; // CLONE_VM|FS|FILES|SIGHAND|THREAD|SYSVSEM|SETTLS|PARENT/CHILD_SETTID.
    assert.deepEqual(call(arch, "clone", [SIGCHLD, 0n, 0n, 0n, 0n]), ALLOW);
    assert.deepEqual(call(arch, "clone", [threadFlags, 0n, 0n, 0n, 0n]), ALLOW);
    assert.deepEqual(call(arch, "clone", [CLONE_NEWUSER | SIGCHLD, 0n, 0n, 0n, 0n]), EPERM);
    assert.deepEqual(call(arch, "clone", [CLONE_NEWUSER | threadFlags | HIGH, 0n, 0n, 0n, 0n]), EPERM);
    // Other namespace flags without a user namespace need capabilities the sandbox does not have.
    assert.deepEqual(call(arch, "clone", [0x20000000n /* CLONE_NEWPID */ | SIGCHLD]), ALLOW);
  });

  Deno.test(`${arch}: personality(0) and the query are allowed, other personas denied`, () => {
    assert.deepEqual(call(arch, "personality", [0n]), ALLOW);
    assert.deepEqual(call(arch, "personality", [0xFFFFFFFFn]), ALLOW);
    assert.deepEqual(call(arch, "personality", [-1n]), ALLOW); // 0xffffffff sign-extended by a caller.
    assert.deepEqual(call(arch, "personality", [8n]), EPERM);
    assert.deepEqual(call(arch, "personality", [0x0040000n]), EPERM); // ADDR_NO_RANDOMIZE (setarch -R).
    assert.deepEqual(call(arch, "personality", [0x0400000n]), EPERM); // READ_IMPLIES_EXEC.
  });

  Deno.test(`${arch}: socket AF_PACKET is denied, AF_INET/AF_INET6/AF_NETLINK allowed, in every filter`, () => {
    for (const options of [CLOSED, GRANTED, NETWORK]) {
      for (const family of [2n, 10n, 16n]) {
        assert.deepEqual(call(arch, "socket", [family, 1n, 0n], options), ALLOW, `family ${family}`);
      }
      for (
        const family of [17n, /* AF_PACKET */ 0n, 3n, /* AF_AX25 */ 38n, /* AF_ALG */ 40n, /* AF_VSOCK */ 44n]
      ) {
        assert.deepEqual(call(arch, "socket", [family, 3n, 0n], options), EPERM, `family ${family}`);
      }
      assert.deepEqual(call(arch, "socket", [17n | HIGH, 3n, 0n], options), EPERM);
    }
  });

  Deno.test(`${arch}: socket AF_UNIX is denied with network off, allowed with a socket grant or network`, () => {
    for (const type of [1n, /* SOCK_STREAM */ 2n, /* SOCK_DGRAM */ 5n, /* SEQPACKET */ 0x80801n]) {
      for (const family of [1n, 1n | HIGH, 1n | 0x1_00000000n]) {
        assert.deepEqual(call(arch, "socket", [family, type, 0n], CLOSED), EPERM, `${family} ${type}`);
        assert.deepEqual(call(arch, "socket", [family, type, 0n], GRANTED), ALLOW, `${family} ${type}`);
        assert.deepEqual(call(arch, "socket", [family, type, 0n], NETWORK), ALLOW, `${family} ${type}`);
      }
    }
    // Stream and seqpacket pairs stay connected to each other: they reach nothing outside.
    for (const type of [1n, 5n, 0x80801n, 0x805n, 1n | HIGH]) {
      for (const options of [CLOSED, GRANTED, NETWORK]) {
        assert.deepEqual(call(arch, "socketpair", [1n, type, 0n, JUNK], options), ALLOW, `${type}`);
      }
    }
    // A datagram pair can sendto() or re-connect() any path: refused while host IPC is closed.
    for (const type of [2n, 0x802n, 0x80002n, 0x80802n, 2n | HIGH]) {
      assert.deepEqual(call(arch, "socketpair", [1n, type, 0n, JUNK], CLOSED), EPERM, `${type}`);
      assert.deepEqual(call(arch, "socketpair", [1n, type, 0n, JUNK], GRANTED), ALLOW, `${type}`);
      assert.deepEqual(call(arch, "socketpair", [1n, type, 0n, JUNK], NETWORK), ALLOW, `${type}`);
    }
  });

  Deno.test(`${arch}: clone3 and the new mount API fail with ENOSYS`, () => {
    for (
      const name of [
        "clone3",
        "open_tree",
        "move_mount",
        "fsopen",
        "fsconfig",
        "fsmount",
        "fspick",
        "mount_setattr",
        "open_tree_attr",
      ] as const
    ) {
      assert.deepEqual(call(arch, name, [0n, 88n]), ENOSYS, name);
    }
  });

  Deno.test(`${arch}: a foreign architecture is killed before anything else is looked at`, () => {
    const other = arch === "x86_64" ? AUDIT_ARCH.aarch64 : AUDIT_ARCH.x86_64;
    for (const foreign of [AUDIT_ARCH_I386, other, 0x40000028, /* ARM */ 0, 0xFFFFFFFF]) {
      for (const nr of [0, 1, 39, 172, syscallNumber("getpid", arch) ?? 0]) {
        assert.deepEqual(runFilter(programs[arch], { nr, arch: foreign }), { action: "kill_process" });
      }
    }
  });

  Deno.test(`${arch}: syscalls no rule names are allowed`, () => {
    for (const nr of [0, 1, 2, 3, 4, 5, 10, 59, 60, 200, 221, 231, 257, 262, 334, 439]) {
      const named = Object.values(SYSCALLS).some((row) => row[arch] === nr);
      const ruled = RULES.some((rule) => syscallNumber(rule.syscall, arch) === nr);
      if (named && ruled) continue;
      assert.deepEqual(
        runFilter(programs[arch], { nr, arch: AUDIT_ARCH[arch], args: [JUNK] }),
        ALLOW,
        `nr ${nr}`,
      );
    }
  });

  Deno.test(`${arch}: the compiled program is valid, short, and every jump is in range`, () => {
    const insns = decodeProgram(programs[arch]);
    validateProgram(insns);
    assert.equal(programs[arch].length, insns.length * 8);
    assert.ok(insns.length <= BPF_MAXINSNS);
    // 3 for the arch check, 1 load of nr, 2 for x32 on x86_64, per rule 1 jeq + its body, 1 final allow.
    const compiled = rulesFor(RULES, CLOSED);
    const bodies = compiled.filter((r) => syscallNumber(r.syscall, arch) !== null).reduce((sum, r) => {
      const c = r.condition;
      if (c === undefined) return sum + 1;
      return sum + (c.kind === "any_bit_set" ? 4 : 3 + c.values.length);
    }, 0);
    const rules = compiled.length - SKIPPED[arch].length;
    assert.equal(insns.length, 3 + 1 + (arch === "x86_64" ? 2 : 0) + rules + bodies + 1);
    insns.forEach((insn, pc) => {
      if ((insn.code & 0x07) !== BPF.JMP) return;
      assert.ok(insn.jt <= 255 && insn.jf <= 255, `pc ${pc}`);
      const far = insn.code === (BPF.JMP | BPF.JA) ? insn.k : Math.max(insn.jt, insn.jf);
      assert.ok(pc + 1 + far < insns.length, `pc ${pc} jumps past the end`);
    });
    const last = insns[insns.length - 1];
    assert.deepEqual(last, { code: BPF.RET | BPF.K, jt: 0, jf: 0, k: SECCOMP_RET.ALLOW });
  });

  Deno.test(`${arch}: a socket grant gives the network filter; network off differs only in sockets`, () => {
    assert.deepEqual(compileSeccomp(arch, GRANTED), compileSeccomp(arch, NETWORK));
    assert.notDeepEqual(compileSeccomp(arch, NETWORK), programs[arch]);
    const closed = describeRules(arch, CLOSED);
    const open = describeRules(arch, NETWORK);
    const sockets = (r: { syscall: string }) => r.syscall !== "socket" && r.syscall !== "socketpair";
    assert.deepEqual(closed.filter(sockets), open.filter(sockets));
    assert.match(closed.find((r) => r.syscall === "socketpair")?.condition ?? "", /SOCK_DGRAM \(0x2\)/);
    assert.equal(open.find((r) => r.syscall === "socketpair"), undefined);
    assert.match(
      closed.find((r) => r.syscall === "socket")?.condition ?? "",
      /none of AF_INET \(0x2\), AF_INET6/,
    );
    assert.match(open.find((r) => r.syscall === "socket")?.condition ?? "", /none of AF_UNIX \(0x1\)/);
  });

  Deno.test(`${arch}: describeRules lists every compiled rule with its number, action and condition`, () => {
    const rows = describeRules(arch);
    assert.equal(rows.length, rulesFor(RULES, CLOSED).length - SKIPPED[arch].length);
    for (const row of rows) assert.equal(row.nr, syscallNumber(row.syscall as SyscallName, arch));
    assert.deepEqual(rows.find((r) => r.syscall === "ioctl"), {
      syscall: "ioctl",
      nr: syscallNumber("ioctl", arch),
      action: "ERRNO(EPERM)",
      condition: "low 32 bits of arg1 are TIOCSTI (0x5412) or TIOCLINUX (0x541c)",
      reason: RULES.find((r) => r.syscall === "ioctl")?.reason,
    });
    assert.equal(rows.find((r) => r.syscall === "ptrace")?.condition, null);
    assert.equal(rows.find((r) => r.syscall === "clone3")?.action, "ERRNO(ENOSYS)");
  });
}

Deno.test("x86_64: x32 syscall numbers fail with EPERM, even for harmless calls", () => {
  for (const name of ["read", "getpid", "ptrace", "ioctl"] as const) {
    const nr = (syscallNumber(name, "x86_64") ?? 0) + X32_SYSCALL_BIT;
    const result = runFilter(programs.x86_64, { nr, arch: AUDIT_ARCH.x86_64, args: [0n, 0x5401n] });
    assert.deepEqual(result, EPERM, name);
  }
  assert.deepEqual(runFilter(programs.x86_64, { nr: 0x40000200, arch: AUDIT_ARCH.x86_64 }), EPERM);
  assert.deepEqual(runFilter(programs.x86_64, { nr: -1, arch: AUDIT_ARCH.x86_64 }), EPERM);
});

Deno.test("aarch64: numbers with bit 30 set are simply unknown syscalls (no x32 there)", () => {
  assert.deepEqual(
    runFilter(programs.aarch64, { nr: X32_SYSCALL_BIT + 63, arch: AUDIT_ARCH.aarch64 }),
    ALLOW,
  );
});

Deno.test("the rule table names each syscall once per filter, and every rule compiles somewhere", () => {
  for (const options of [CLOSED, GRANTED, NETWORK]) {
    const names = rulesFor(RULES, options).map((r) => r.syscall);
    assert.equal(new Set(names).size, names.length);
  }
  for (const rule of RULES) {
    assert.ok(SECCOMP_ARCHES.some((arch) => syscallNumber(rule.syscall, arch) !== null), rule.syscall);
    assert.ok(rule.reason.length > 0, rule.syscall);
  }
});

Deno.test("the rule table holds every call the issue lists", () => {
  const required = [
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "setns",
    "unshare",
    "clone",
    "clone3",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "personality",
    "acct",
    "swapon",
    "swapoff",
    "reboot",
    "syslog",
    "quotactl",
    "open_by_handle_at",
    "name_to_handle_at",
    "iopl",
    "ioperm",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "ioctl",
    "socket",
  ];
  const names = new Set<string>(RULES.map((r) => r.syscall));
  assert.deepEqual(required.filter((name) => !names.has(name)), []);
});

Deno.test("jump offsets stay within 8 bits however long the table gets", () => {
  // Every known syscall with a condition of as many values as keep it near the kernel's limit (~3,700).
  const names = Object.keys(SYSCALLS) as SyscallName[];
  const values = Array.from(
    { length: Math.floor(3700 / names.length) },
    (_, i) => ({ name: `V${i}`, value: 1000 + i }),
  );
  const big: SeccompRule[] = names.map((syscall) => ({
    syscall,
    action: "EPERM",
    condition: { kind: "equals_any", arg: 2, values },
    reason: "test",
  }));
  for (const arch of SECCOMP_ARCHES) {
    const program = compileRules(arch, big, { network: false });
    assert.ok(program.length > 3000);
    validateProgram(program);
    assert.ok(program.every((insn) => insn.jt <= 255 && insn.jf <= 255));
  }
});

Deno.test("the compiler refuses what it cannot express", () => {
  const rule: SeccompRule = { syscall: "ptrace", action: "EPERM", reason: "test" };
  assert.throws(() => compileRules("x86_64", [rule, rule], { network: false }), RangeError);
  const values = Array.from({ length: 300 }, (_, i) => ({ name: `V${i}`, value: i }));
  const wide: SeccompRule = { ...rule, condition: { kind: "equals_none", arg: 0, values } };
  assert.throws(() => compileRules("x86_64", [wide], { network: false }), RangeError);
});

Deno.test("an unknown architecture is refused with E_SANDBOX_UNAVAILABLE", () => {
  for (const arch of ["riscv64", "i386", ""]) {
    const isUnavailable = (error: unknown): boolean =>
      error instanceof SandboxError && error.code === "E_SANDBOX_UNAVAILABLE";
    assert.throws(() => compileSeccomp(arch as SeccompArch, { network: false }), isUnavailable);
    assert.throws(() => describeRules(arch as SeccompArch), isUnavailable);
    assert.throws(() => describeRuleList(arch as SeccompArch, RULES), isUnavailable);
  }
});
