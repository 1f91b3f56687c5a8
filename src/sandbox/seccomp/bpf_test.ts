import assert from "node:assert/strict";
import {
  argHighOffset,
  argLowOffset,
  BPF,
  decodeProgram,
  encodeProgram,
  jump,
  SECCOMP_RET,
  stmt,
} from "./bpf.ts";

Deno.test("instructions encode as little-endian struct sock_filter", () => {
  const bytes = encodeProgram([
    jump(BPF.JMP | BPF.JEQ | BPF.K, 0xC000003E, 1, 2),
    stmt(BPF.RET, SECCOMP_RET.ALLOW),
  ]);
  assert.deepEqual(
    [...bytes],
    [0x15, 0x00, 0x01, 0x02, 0x3e, 0x00, 0x00, 0xc0, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0x7f],
  );
});

Deno.test("decodeProgram inverts encodeProgram, also on a subarray", () => {
  const program = [stmt(BPF.LD | BPF.W | BPF.ABS, 4), jump(BPF.JMP | BPF.JSET | BPF.K, 0xffffffff, 255, 0)];
  const bytes = encodeProgram(program);
  assert.deepEqual(decodeProgram(bytes), program);
  const padded = new Uint8Array(bytes.length + 8);
  padded.set(bytes, 8);
  assert.deepEqual(decodeProgram(padded.subarray(8)), program);
});

Deno.test("decodeProgram refuses a length that is not a multiple of 8", () => {
  assert.throws(() => decodeProgram(new Uint8Array(12)), RangeError);
});

Deno.test("jump offsets must fit in 8 bits", () => {
  assert.equal(jump(BPF.JMP | BPF.JEQ, 0, 255, 255).jt, 255);
  for (const bad of [256, -1, 1.5]) {
    assert.throws(() => jump(BPF.JMP | BPF.JEQ, 0, bad, 0), RangeError);
    assert.throws(() => jump(BPF.JMP | BPF.JEQ, 0, 0, bad), RangeError);
  }
});

Deno.test("constants are stored as unsigned 32-bit values", () => {
  assert.equal(stmt(BPF.RET, -1).k, 0xffffffff);
  assert.equal(stmt(BPF.RET, SECCOMP_RET.KILL_PROCESS).k, 0x80000000);
});

Deno.test("argument offsets follow struct seccomp_data on little-endian machines", () => {
  assert.deepEqual([0, 1, 2, 3, 4, 5].map(argLowOffset), [16, 24, 32, 40, 48, 56]);
  assert.deepEqual([0, 5].map(argHighOffset), [20, 60]);
});
