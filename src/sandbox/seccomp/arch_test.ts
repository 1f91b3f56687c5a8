import assert from "node:assert/strict";
import { SandboxError } from "../../errors.ts";
import { AUDIT_ARCH, AUDIT_ARCH_I386, SECCOMP_ARCHES, seccompArchFor, X32_SYSCALL_BIT } from "./arch.ts";

// <linux/audit.h>: AUDIT_ARCH_* = EM_* | __AUDIT_ARCH_64BIT (0x80000000) | __AUDIT_ARCH_LE (0x40000000).
const EM = { x86_64: 62, aarch64: 183 } as const;

for (const arch of SECCOMP_ARCHES) {
  Deno.test(`AUDIT_ARCH.${arch} is EM_${arch.toUpperCase()} | 64BIT | LE`, () => {
    assert.equal(AUDIT_ARCH[arch], (EM[arch] | 0x80000000 | 0x40000000) >>> 0);
  });

  Deno.test(`seccompArchFor("${arch}") is ${arch}`, () => {
    assert.equal(seccompArchFor(arch), arch);
  });
}

Deno.test("AUDIT_ARCH_I386 is EM_386 | LE (32-bit) and the x32 bit is bit 30", () => {
  assert.equal(AUDIT_ARCH_I386, 3 | 0x40000000);
  assert.equal(X32_SYSCALL_BIT, 2 ** 30);
});

Deno.test("seccompArchFor refuses every other architecture with E_SANDBOX_UNAVAILABLE", () => {
  for (const arch of ["riscv64", "arm", "x86", "i686", "s390x", "ppc64le", "aarch64_be", ""]) {
    assert.throws(
      () => seccompArchFor(arch),
      (error: unknown) =>
        error instanceof SandboxError && error.code === "E_SANDBOX_UNAVAILABLE" &&
        error.details.arch === arch,
      arch,
    );
  }
});

Deno.test("this machine's architecture is supported", () => {
  assert.ok((SECCOMP_ARCHES as readonly string[]).includes(seccompArchFor(Deno.build.arch)));
});
