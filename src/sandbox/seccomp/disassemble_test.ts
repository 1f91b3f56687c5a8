import assert from "node:assert/strict";
import { SECCOMP_ARCHES } from "./arch.ts";
import { BPF, encodeProgram, SECCOMP_RET, stmt } from "./bpf.ts";
import { compileSeccomp } from "./compile.ts";
import { describeReturn, disassemble } from "./disassemble.ts";

for (const arch of SECCOMP_ARCHES) {
  Deno.test(`${arch}: the listing has one line per instruction and names what it checks`, () => {
    const program = compileSeccomp(arch, { network: false });
    const lines = disassemble(program, arch);
    assert.equal(lines.length, program.length / 8);
    assert.match(lines[0] ?? "", /^0000: ld \[4\] ; arch$/);
    assert.match(lines[1] ?? "", new RegExp(`^0001: jeq #0x[0-9a-f]+ jt 0003 jf 0002 ; AUDIT_ARCH ${arch}$`));
    assert.equal(lines[2], "0002: ret KILL_PROCESS");
    assert.equal(lines[3], "0003: ld [0] ; nr");
    assert.equal(lines[lines.length - 1], `${String(lines.length - 1).padStart(4, "0")}: ret ALLOW`);
    for (const name of ["ptrace", "ioctl", "clone", "clone3", "socket", "personality"]) {
      assert.ok(lines.some((line) => line.endsWith(`; ${name}`)), name);
    }
    assert.ok(lines.some((line) => line.includes("ret ERRNO(38 ENOSYS)")));
    assert.ok(lines.some((line) => /ld \[24\] ; args\[1\] \(low 32 bits\)$/.test(line)));
    assert.equal(lines.some((line) => line.includes("x32")), arch === "x86_64");
  });
}

Deno.test("without an architecture the listing leaves syscall numbers unnamed", () => {
  const lines = disassemble(compileSeccomp("x86_64", { network: false }));
  assert.ok(!lines.some((line) => line.endsWith("; ptrace")));
});

Deno.test("every instruction class disassembles", () => {
  const program = encodeProgram([
    stmt(BPF.LD | BPF.IMM, 1),
    stmt(BPF.LDX | BPF.W | BPF.LEN, 0),
    stmt(BPF.ST, 2),
    stmt(BPF.LD | BPF.MEM, 2),
    stmt(BPF.ALU | BPF.AND | BPF.K, 0xff),
    stmt(BPF.ALU | BPF.ADD | BPF.X, 0),
    stmt(BPF.ALU | BPF.NEG, 0),
    stmt(BPF.MISC | BPF.TAX, 0),
    stmt(BPF.JMP | BPF.JA, 0),
    stmt(BPF.RET | BPF.A, 0),
  ]);
  assert.deepEqual(disassemble(program), [
    "0000: ld #0x1",
    "0001: ldx len",
    "0002: st M[2]",
    "0003: ld M[2]",
    "0004: and #0xff",
    "0005: add x",
    "0006: neg",
    "0007: tax",
    "0008: ja 0009",
    "0009: ret a",
  ]);
});

Deno.test("return values are spelled out", () => {
  assert.equal(describeReturn(SECCOMP_RET.ALLOW), "ALLOW");
  assert.equal(describeReturn(SECCOMP_RET.KILL_PROCESS), "KILL_PROCESS");
  assert.equal(describeReturn(SECCOMP_RET.KILL_THREAD), "KILL_THREAD");
  assert.equal(describeReturn(SECCOMP_RET.ERRNO | 1), "ERRNO(1 EPERM)");
  assert.equal(describeReturn(SECCOMP_RET.ERRNO | 13), "ERRNO(13)");
  assert.equal(describeReturn(SECCOMP_RET.TRAP | 2), "TRAP(2)");
  assert.equal(describeReturn(SECCOMP_RET.LOG), "LOG");
});
