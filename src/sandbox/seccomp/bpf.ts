/**
 * Classic BPF as seccomp uses it: opcode constants, `struct sock_filter` encoding, `struct seccomp_data`
 * offsets and `SECCOMP_RET_*` values (from `<linux/filter.h>`, `<linux/bpf_common.h>`, `<linux/seccomp.h>`).
 *
 * @module
 */

/** One `struct sock_filter` instruction: `{ u16 code; u8 jt; u8 jf; u32 k; }`. */
export interface SockFilter {
  /** Opcode: class | size/op | mode/src. */
  readonly code: number;
  /** Instructions to skip when a conditional jump is taken (0–255). */
  readonly jt: number;
  /** Instructions to skip when it is not taken (0–255). */
  readonly jf: number;
  /** The constant operand. */
  readonly k: number;
}

/** Bytes per encoded instruction. */
export const SOCK_FILTER_SIZE = 8;

/** `BPF_MAXINSNS`: the kernel refuses longer programs. */
export const BPF_MAXINSNS = 4096;

/** Classic BPF opcode parts. */
export const BPF = {
  // Instruction classes (code & 0x07).
  LD: 0x00,
  LDX: 0x01,
  ST: 0x02,
  STX: 0x03,
  ALU: 0x04,
  JMP: 0x05,
  RET: 0x06,
  MISC: 0x07,
  // Load sizes (code & 0x18).
  W: 0x00,
  H: 0x08,
  B: 0x10,
  // Load modes (code & 0xe0).
  IMM: 0x00,
  ABS: 0x20,
  IND: 0x40,
  MEM: 0x60,
  LEN: 0x80,
  MSH: 0xa0,
  // ALU operations (code & 0xf0).
  ADD: 0x00,
  SUB: 0x10,
  MUL: 0x20,
  DIV: 0x30,
  OR: 0x40,
  AND: 0x50,
  LSH: 0x60,
  RSH: 0x70,
  NEG: 0x80,
  MOD: 0x90,
  XOR: 0xa0,
  // Jump operations (code & 0xf0).
  JA: 0x00,
  JEQ: 0x10,
  JGT: 0x20,
  JGE: 0x30,
  JSET: 0x40,
  // Operand source (code & 0x08).
  K: 0x00,
  X: 0x08,
  // RET operand (code & 0x18).
  A: 0x10,
  // MISC operations (code & 0xf8).
  TAX: 0x00,
  TXA: 0x80,
} as const;

/** `BPF_MEMWORDS`: number of scratch memory slots. */
export const BPF_MEMWORDS = 16;

/** `SECCOMP_RET_*` filter return values and masks. */
export const SECCOMP_RET = {
  KILL_PROCESS: 0x80000000,
  KILL_THREAD: 0x00000000,
  TRAP: 0x00030000,
  ERRNO: 0x00050000,
  USER_NOTIF: 0x7fc00000,
  TRACE: 0x7ff00000,
  LOG: 0x7ffc0000,
  ALLOW: 0x7fff0000,
  /** Mask of the action part of a return value. */
  ACTION_FULL: 0xffff0000,
  /** Mask of the data part (the errno for `ERRNO`). */
  DATA: 0x0000ffff,
} as const;

/** `sizeof(struct seccomp_data)`; loads must stay inside it. */
export const SECCOMP_DATA_SIZE = 64;

/** Byte offsets into `struct seccomp_data` (little-endian layout). */
export const SECCOMP_DATA = {
  /** `int nr`. */
  NR: 0,
  /** `__u32 arch`. */
  ARCH: 4,
  /** Low word of `__u64 instruction_pointer`. */
  IP_LOW: 8,
  /** High word of `__u64 instruction_pointer`. */
  IP_HIGH: 12,
} as const;

/**
 * Offset of the low 32 bits of `args[index]`. Both supported architectures are little-endian, so the low
 * word comes first; a big-endian port would need `+ 4` here (and reports a different `AUDIT_ARCH`).
 */
export function argLowOffset(index: number): number {
  return 16 + 8 * index;
}

/** Offset of the high 32 bits of `args[index]` (little-endian). */
export function argHighOffset(index: number): number {
  return argLowOffset(index) + 4;
}

/** Encodes instructions as the byte array `bwrap --seccomp` reads (host order: little-endian). */
export function encodeProgram(program: readonly SockFilter[]): Uint8Array {
  const bytes = new Uint8Array(program.length * SOCK_FILTER_SIZE);
  const view = new DataView(bytes.buffer);
  program.forEach((insn, i) => {
    const at = i * SOCK_FILTER_SIZE;
    view.setUint16(at, insn.code, true);
    view.setUint8(at + 2, insn.jt);
    view.setUint8(at + 3, insn.jf);
    view.setUint32(at + 4, insn.k, true);
  });
  return bytes;
}

/**
 * Decodes a byte array back into instructions.
 *
 * @throws {RangeError} when the length is not a multiple of 8.
 */
export function decodeProgram(bytes: Uint8Array): SockFilter[] {
  if (bytes.length % SOCK_FILTER_SIZE !== 0) {
    throw new RangeError(`A BPF program is a multiple of 8 bytes, got ${bytes.length}`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const program: SockFilter[] = [];
  for (let at = 0; at < bytes.length; at += SOCK_FILTER_SIZE) {
    program.push({
      code: view.getUint16(at, true),
      jt: view.getUint8(at + 2),
      jf: view.getUint8(at + 3),
      k: view.getUint32(at + 4, true),
    });
  }
  return program;
}

/** `BPF_STMT(code, k)`. */
export function stmt(code: number, k: number): SockFilter {
  return { code, jt: 0, jf: 0, k: k >>> 0 };
}

/**
 * `BPF_JUMP(code, k, jt, jf)`.
 *
 * @throws {RangeError} when an offset does not fit the 8-bit field: the program would jump elsewhere.
 */
export function jump(code: number, k: number, jt: number, jf: number): SockFilter {
  for (const offset of [jt, jf]) {
    if (!Number.isInteger(offset) || offset < 0 || offset > 255) {
      throw new RangeError(`BPF jump offset ${offset} does not fit in 8 bits`);
    }
  }
  return { code, jt, jf, k: k >>> 0 };
}
