import assert from "node:assert/strict";
import { SECCOMP_ARCHES, type SeccompArch, seccompArchFor } from "./arch.ts";
import { ERRNO, type SyscallName, syscallNumber, SYSCALLS } from "./syscalls.ts";

/**
 * The kernel headers that define each architecture's numbers. The x86_64 one exists only on x86_64
 * machines; the generic table (aarch64's) ships with every linux-libc-dev.
 */
const HEADERS: Record<SeccompArch, string> = {
  x86_64: "/usr/include/x86_64-linux-gnu/asm/unistd_64.h",
  aarch64: "/usr/include/asm-generic/unistd.h",
};

/** Syscalls newer than the kernel headers installed here may be missing from them (see below). */
const NEWER_THAN_HEADERS: readonly SyscallName[] = ["open_tree_attr", "fchmodat2"];

function readHeader(path: string): Map<string, number> | null {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (error: unknown) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  const numbers = new Map<string, number>();
  for (const match of text.matchAll(/^#define __NR_(\w+)\s+(\d+)\s*$/gm)) {
    numbers.set(match[1] ?? "", Number(match[2]));
  }
  // The generic table names some calls through their 32/64-bit alias: `#define __NR_fcntl __NR3264_fcntl`.
  const aliases = new Map<string, number>();
  for (const match of text.matchAll(/^#define __NR3264_(\w+)\s+(\d+)\s*$/gm)) {
    aliases.set(match[1] ?? "", Number(match[2]));
  }
  for (const match of text.matchAll(/^#define __NR_(\w+)\s+__NR3264_(\w+)\s*$/gm)) {
    const value = aliases.get(match[2] ?? "");
    if (value !== undefined && !numbers.has(match[1] ?? "")) numbers.set(match[1] ?? "", value);
  }
  return numbers;
}

const host = seccompArchFor(Deno.build.arch);
const names = Object.keys(SYSCALLS) as SyscallName[];

for (const arch of SECCOMP_ARCHES) {
  const header = readHeader(HEADERS[arch]);
  // The host's own header must be there: without it nothing checks the numbers the filter relies on.
  const ignore = header === null && arch !== host;
  for (const name of names) {
    Deno.test({ name: `${arch} ${name} = ${SYSCALLS[name][arch]} per ${HEADERS[arch]}`, ignore }, () => {
      assert.ok(header !== null, `${HEADERS[arch]} is missing: install linux-libc-dev`);
      const expected = SYSCALLS[name][arch];
      const fromHeader = header.get(name);
      if (fromHeader === undefined && NEWER_THAN_HEADERS.includes(name)) {
        // Numbers from 424 on are shared by every architecture (one table since Linux 5.1), so the
        // value is cross-checked below; the header simply predates the syscall.
        assert.ok(expected !== null && expected >= 424);
        return;
      }
      assert.equal(fromHeader ?? null, expected);
    });
  }
}

Deno.test("syscalls numbered 424 and up have the same number on both architectures", () => {
  for (const name of names) {
    const { x86_64, aarch64 } = SYSCALLS[name];
    if (x86_64 >= 424) assert.equal(aarch64, x86_64, name);
  }
});

Deno.test("no two syscalls share a number on one architecture", () => {
  for (const arch of SECCOMP_ARCHES) {
    const numbers = names.map((n) => syscallNumber(n, arch)).filter((n) => n !== null);
    assert.equal(new Set(numbers).size, numbers.length, arch);
  }
});

Deno.test("only the legacy calls aarch64 never had are absent, and only there", () => {
  const absent = SECCOMP_ARCHES.flatMap((arch) =>
    names.filter((n) => syscallNumber(n, arch) === null).map((n) => `${arch}:${n}`)
  );
  assert.deepEqual(absent.sort(), [
    "aarch64:chmod",
    "aarch64:creat",
    "aarch64:ioperm",
    "aarch64:iopl",
    "aarch64:mknod",
    "aarch64:open",
  ]);
});

Deno.test("the host kernel agrees: syscall(getpid) is this process's pid, unknown numbers are ENOSYS", async () => {
  // An independent check of the table against the running kernel (not just headers), with calls that
  // are harmless: getpid must answer the pid, and a number past the table must be ENOSYS.
  const nr = syscallNumber("getpid", host);
  const script = `
import ctypes, os, json
libc = ctypes.CDLL(None, use_errno=True)
pid = libc.syscall(ctypes.c_long(${nr}))
r = libc.syscall(ctypes.c_long(4000))
print(json.dumps({"pid": pid, "os_pid": os.getpid(), "unknown": [r, ctypes.get_errno()]}))`;
  const { stdout, success } = await new Deno.Command("python3", { args: ["-c", script], stdout: "piped" })
    .output();
  assert.ok(success);
  const real = JSON.parse(new TextDecoder().decode(stdout));
  assert.equal(real.pid, real.os_pid);
  assert.deepEqual(real.unknown, [-1, ERRNO.ENOSYS]);
});

Deno.test("errno values match this machine's", async () => {
  const { stdout, success } = await new Deno.Command("python3", {
    args: ["-c", "import errno; print(errno.EPERM, errno.ENOSYS)"],
    stdout: "piped",
  }).output();
  assert.ok(success);
  assert.equal(new TextDecoder().decode(stdout).trim(), `${ERRNO.EPERM} ${ERRNO.ENOSYS}`);
});
