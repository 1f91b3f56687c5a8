/**
 * The architectures the seccomp compiler supports and the `AUDIT_ARCH_*` value the kernel reports for
 * each in `seccomp_data.arch`.
 *
 * @module
 */
import { SandboxError } from "../../errors.ts";

/** The architectures a filter can be compiled for (Deno's `Deno.build.arch` names). */
export const SECCOMP_ARCHES = ["x86_64", "aarch64"] as const;

/** An architecture a filter can be compiled for. */
export type SeccompArch = typeof SECCOMP_ARCHES[number];

/**
 * `AUDIT_ARCH_*` from `<linux/audit.h>`: the ELF machine number with the 64-bit and little-endian flags
 * (`EM_X86_64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE`, `EM_AARCH64 | …`). A big-endian aarch64 or a 32-bit
 * compat caller reports a different value, so the filter's first check kills it.
 */
export const AUDIT_ARCH = {
  x86_64: 0xC000003E,
  aarch64: 0xC00000B7,
} as const satisfies Record<SeccompArch, number>;

/** `AUDIT_ARCH_I386`: what a 32-bit (`int 0x80`) syscall on an x86-64 kernel reports. Tests use it. */
export const AUDIT_ARCH_I386 = 0x40000003;

/**
 * `__X32_SYSCALL_BIT`: x32 syscalls arrive with `AUDIT_ARCH_X86_64` and this bit set in `nr`. They reach
 * the same kernel functions under different numbers, so a filter keyed on x86-64 numbers would miss them.
 */
export const X32_SYSCALL_BIT = 0x40000000;

/**
 * The seccomp architecture for a `Deno.build.arch` value.
 *
 * @throws {SandboxError} `E_SANDBOX_UNAVAILABLE` for any other architecture: running without the filter
 * would be a silent downgrade.
 */
export function seccompArchFor(denoArch: string): SeccompArch {
  switch (denoArch) {
    case "x86_64":
    case "aarch64":
      return denoArch;
    default:
      throw new SandboxError(
        "E_SANDBOX_UNAVAILABLE",
        `No seccomp filter exists for the ${JSON.stringify(denoArch)} architecture (supported: ` +
          `${SECCOMP_ARCHES.join(", ")}); run Specter on x86_64 or aarch64 Linux`,
        { details: { arch: denoArch } },
      );
  }
}
