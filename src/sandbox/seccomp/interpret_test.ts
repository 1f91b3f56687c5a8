import assert from "node:assert/strict";
import { BPF, encodeProgram, jump, SECCOMP_RET, type SockFilter, stmt } from "./bpf.ts";
import { classify, encodeSeccompData, filterReturnValue, runFilter, validateProgram } from "./interpret.ts";

const LD_ABS = BPF.LD | BPF.W | BPF.ABS;
const RET_K = BPF.RET | BPF.K;
const RET_A = BPF.RET | BPF.A;
const data = {
  nr: 7,
  arch: 0xC000003E,
  instruction_pointer: 0x1122334455667788n,
  args: [0xAABBCCDD_01020304n],
};

/** Runs a program that ends in `ret a` and returns the accumulator. */
function accumulator(program: SockFilter[]): number {
  return filterReturnValue(encodeProgram([...program, stmt(RET_A, 0)]), data);
}

Deno.test("seccomp_data is laid out as the kernel's little-endian struct", () => {
  const view = encodeSeccompData({
    nr: -1,
    arch: 0xC00000B7,
    instruction_pointer: 1n,
    args: [-1n, 2n ** 64n + 5n],
  });
  assert.equal(view.byteLength, 64);
  assert.equal(view.getInt32(0, true), -1);
  assert.equal(view.getUint32(4, true), 0xC00000B7);
  assert.equal(view.getBigUint64(8, true), 1n);
  assert.equal(view.getBigUint64(16, true), 0xFFFFFFFFFFFFFFFFn);
  assert.equal(view.getBigUint64(24, true), 5n);
  assert.equal(view.getBigUint64(56, true), 0n);
  assert.throws(() => encodeSeccompData({ nr: 0, arch: 0, args: [0n, 0n, 0n, 0n, 0n, 0n, 0n] }), RangeError);
});

Deno.test("ld [k] reads every word of seccomp_data", () => {
  const words = [0, 4, 8, 12, 16, 20].map((k) => accumulator([stmt(LD_ABS, k)]));
  assert.deepEqual(words, [7, 0xC000003E, 0x55667788, 0x11223344, 0x01020304, 0xAABBCCDD]);
  assert.equal(accumulator([stmt(LD_ABS, 60)]), 0);
});

Deno.test("ld #k, ld len, ldx, st/stx and scratch memory, tax/txa", () => {
  assert.equal(accumulator([stmt(BPF.LD | BPF.IMM, 0xdeadbeef)]), 0xdeadbeef);
  assert.equal(accumulator([stmt(BPF.LD | BPF.W | BPF.LEN, 0)]), 64);
  assert.equal(accumulator([stmt(BPF.LDX | BPF.W | BPF.LEN, 0), stmt(BPF.MISC | BPF.TXA, 0)]), 64);
  assert.equal(accumulator([stmt(BPF.LDX | BPF.IMM, 9), stmt(BPF.MISC | BPF.TXA, 0)]), 9);
  assert.equal(
    accumulator([
      stmt(BPF.LD | BPF.IMM, 5),
      stmt(BPF.ST, 3),
      stmt(BPF.LD | BPF.IMM, 0),
      stmt(BPF.LD | BPF.MEM, 3),
    ]),
    5,
  );
  assert.equal(
    accumulator([
      stmt(BPF.LDX | BPF.IMM, 6),
      stmt(BPF.STX, 15),
      stmt(BPF.LDX | BPF.MEM, 15),
      stmt(BPF.LD | BPF.IMM, 1),
      stmt(BPF.MISC | BPF.TXA, 0),
    ]),
    6,
  );
  assert.equal(
    accumulator([stmt(BPF.LD | BPF.IMM, 4), stmt(BPF.MISC | BPF.TAX, 0), stmt(BPF.ALU | BPF.ADD | BPF.X, 0)]),
    8,
  );
});

Deno.test("ALU operations are unsigned 32-bit, with K and X operands", () => {
  const op = (a: number, code: number, k: number): number =>
    accumulator([stmt(BPF.LD | BPF.IMM, a), stmt(BPF.ALU | code | BPF.K, k)]);
  const opX = (a: number, code: number, x: number): number =>
    accumulator([stmt(BPF.LDX | BPF.IMM, x), stmt(BPF.LD | BPF.IMM, a), stmt(BPF.ALU | code | BPF.X, 0)]);
  assert.equal(op(0xffffffff, BPF.ADD, 2), 1);
  assert.equal(op(1, BPF.SUB, 2), 0xffffffff);
  assert.equal(op(0x10000, BPF.MUL, 0x10000), 0);
  assert.equal(op(7, BPF.DIV, 2), 3);
  assert.equal(op(7, BPF.MOD, 4), 3);
  assert.equal(op(0xf0, BPF.OR, 0x0f), 0xff);
  assert.equal(op(0x1_0000_5412 % 2 ** 32, BPF.AND, 0xffff), 0x5412);
  assert.equal(op(0xff, BPF.XOR, 0x0f), 0xf0);
  assert.equal(op(1, BPF.LSH, 31), 0x80000000);
  assert.equal(op(0x80000000, BPF.RSH, 31), 1);
  assert.equal(op(1, BPF.NEG, 0), 0xffffffff);
  assert.equal(opX(7, BPF.DIV, 0), 0); // Division by a zero X returns 0, as the kernel does.
  assert.equal(opX(7, BPF.MOD, 0), 0);
  assert.equal(opX(1, BPF.LSH, 32), 0);
  assert.equal(opX(12, BPF.SUB, 5), 7);
});

Deno.test("conditional jumps jeq/jgt/jge/jset with K and X, and ja", () => {
  const taken = (code: number, a: number, k: number, viaX = false): boolean => {
    const operand = viaX ? [stmt(BPF.LDX | BPF.IMM, k)] : [];
    const program = [
      ...operand,
      stmt(BPF.LD | BPF.IMM, a),
      jump(BPF.JMP | code | (viaX ? BPF.X : BPF.K), viaX ? 0 : k, 1, 0),
      stmt(RET_K, SECCOMP_RET.ERRNO | 1),
      stmt(RET_K, SECCOMP_RET.ALLOW),
    ];
    return runFilter(encodeProgram(program), data).action === "allow";
  };
  for (const viaX of [false, true]) {
    assert.equal(taken(BPF.JEQ, 5, 5, viaX), true);
    assert.equal(taken(BPF.JEQ, 5, 6, viaX), false);
    assert.equal(taken(BPF.JGT, 0xffffffff, 1, viaX), true); // Unsigned comparison.
    assert.equal(taken(BPF.JGT, 5, 5, viaX), false);
    assert.equal(taken(BPF.JGE, 5, 5, viaX), true);
    assert.equal(taken(BPF.JGE, 4, 5, viaX), false);
    assert.equal(taken(BPF.JSET, 0x10000000, 0x10000000, viaX), true);
    assert.equal(taken(BPF.JSET, 0x0fffffff, 0x10000000, viaX), false);
  }
  const ja = [stmt(BPF.JMP | BPF.JA, 1), stmt(RET_K, 0), stmt(RET_K, SECCOMP_RET.ALLOW)];
  assert.deepEqual(runFilter(encodeProgram(ja), data), { action: "allow" });
});

Deno.test("return values map to actions", () => {
  assert.deepEqual(classify(SECCOMP_RET.ALLOW), { action: "allow" });
  assert.deepEqual(classify(SECCOMP_RET.ERRNO | 38), { action: "errno", errno: 38 });
  assert.deepEqual(classify(SECCOMP_RET.KILL_PROCESS), { action: "kill_process" });
  assert.deepEqual(classify(SECCOMP_RET.KILL_THREAD), { action: "other", value: 0 });
  assert.deepEqual(classify(SECCOMP_RET.LOG), { action: "other", value: SECCOMP_RET.LOG });
  assert.deepEqual(classify(SECCOMP_RET.TRAP | 3), { action: "other", value: 0x00030003 });
});

Deno.test("programs the kernel would refuse are refused", () => {
  const ok = stmt(RET_K, SECCOMP_RET.ALLOW);
  const bad: Record<string, SockFilter[]> = {
    "empty": [],
    "too long": new Array(4097).fill(ok),
    "no final ret": [ok, stmt(BPF.LD | BPF.IMM, 0)],
    "ld half word": [stmt(BPF.LD | BPF.H | BPF.ABS, 0), ok],
    "ld byte": [stmt(BPF.LD | BPF.B | BPF.ABS, 0), ok],
    "ld ind": [stmt(BPF.LD | BPF.W | BPF.IND, 0), ok],
    "ldx abs": [stmt(BPF.LDX | BPF.W | BPF.ABS, 0), ok],
    "ldx msh": [stmt(BPF.LDX | BPF.B | BPF.MSH, 0), ok],
    "unaligned load": [stmt(LD_ABS, 2), ok],
    "load past seccomp_data": [stmt(LD_ABS, 64), ok],
    "scratch slot 16": [stmt(BPF.ST, 16), ok],
    "ld mem 16": [stmt(BPF.LD | BPF.MEM, 16), ok],
    "division by constant zero": [stmt(BPF.ALU | BPF.DIV | BPF.K, 0), ok],
    "modulo by constant zero": [stmt(BPF.ALU | BPF.MOD | BPF.K, 0), ok],
    "unknown ALU op": [stmt(BPF.ALU | 0xb0, 0), ok],
    "neg x": [stmt(BPF.ALU | BPF.NEG | BPF.X, 0), ok],
    "jump past the end": [jump(BPF.JMP | BPF.JEQ, 0, 1, 0), ok],
    "ja past the end": [stmt(BPF.JMP | BPF.JA, 1), ok],
    "unknown jump": [jump(BPF.JMP | 0x50, 0, 0, 0), ok],
    "ret x": [stmt(BPF.RET | BPF.X, 0)],
    "unknown misc": [stmt(BPF.MISC | 0x40, 0), ok],
    "opcode above 0xff": [stmt(0x106, 0)],
  };
  for (const [what, program] of Object.entries(bad)) {
    assert.throws(() => validateProgram(program), RangeError, what);
    if (program.length > 0) assert.throws(() => runFilter(encodeProgram(program), data), RangeError, what);
  }
  validateProgram([ok]);
});
