/**
 * A classic-BPF interpreter for seccomp programs, so tests can run a compiled filter against synthetic
 * `struct seccomp_data` without a kernel.
 *
 * It accepts exactly the instructions the kernel's seccomp checker (`seccomp_check_filter` in
 * `kernel/seccomp.c`) accepts and throws on anything else, so a program it runs is one the kernel would
 * load: `ld`/`ldx` of an aligned word inside `seccomp_data`, `len`, immediates and scratch memory, `st`/`stx`,
 * every ALU operation, `ja`/`jeq`/`jgt`/`jge`/`jset` with `K` or `X`, `tax`/`txa` and `ret` of `K` or `A`.
 *
 * @module
 */
import {
  BPF,
  BPF_MAXINSNS,
  BPF_MEMWORDS,
  decodeProgram,
  SECCOMP_DATA_SIZE,
  SECCOMP_RET,
  type SockFilter,
} from "./bpf.ts";

/** The fields of `struct seccomp_data` a test supplies. */
export interface SeccompDataInput {
  /** Syscall number (`int`; may be negative). */
  readonly nr: number;
  /** `AUDIT_ARCH_*` value. */
  readonly arch: number;
  /** Defaults to 0. */
  readonly instruction_pointer?: bigint;
  /** Up to six arguments (full 64-bit values; negative numbers are taken modulo 2^64); missing ones are 0. */
  readonly args?: readonly bigint[];
}

/** The filter's verdict. */
export type FilterResult =
  | { readonly action: "allow" }
  | { readonly action: "errno"; readonly errno: number }
  | { readonly action: "kill_process" }
  | { readonly action: "other"; readonly value: number };

/**
 * Runs a seccomp program (as bytes from `compileSeccomp`) on one syscall.
 *
 * @throws {RangeError} when the program is not one the kernel would load (see {@link validateProgram}).
 */
export function runFilter(program: Uint8Array, data: SeccompDataInput): FilterResult {
  return classify(filterReturnValue(program, data));
}

/**
 * Runs a seccomp program and returns the raw 32-bit value it returns (`SECCOMP_RET_*` | data).
 *
 * @throws {RangeError} when the program is not one the kernel would load (see {@link validateProgram}).
 */
export function filterReturnValue(program: Uint8Array, data: SeccompDataInput): number {
  const insns = decodeProgram(program);
  validateProgram(insns);
  return execute(insns, encodeSeccompData(data));
}

/** Maps a raw `SECCOMP_RET_*` value to a {@link FilterResult}. */
export function classify(value: number): FilterResult {
  const action = (value & SECCOMP_RET.ACTION_FULL) >>> 0;
  if (action === SECCOMP_RET.ALLOW) return { action: "allow" };
  if (action === SECCOMP_RET.ERRNO) return { action: "errno", errno: value & SECCOMP_RET.DATA };
  if (action === SECCOMP_RET.KILL_PROCESS) return { action: "kill_process" };
  return { action: "other", value: value >>> 0 };
}

/** `struct seccomp_data` as the little-endian bytes the filter loads from. */
export function encodeSeccompData(data: SeccompDataInput): DataView {
  const args = data.args ?? [];
  if (args.length > 6) throw new RangeError(`seccomp_data has 6 arguments, got ${args.length}`);
  const view = new DataView(new ArrayBuffer(SECCOMP_DATA_SIZE));
  view.setUint32(0, data.nr >>> 0, true);
  view.setUint32(4, data.arch >>> 0, true);
  view.setBigUint64(8, BigInt.asUintN(64, data.instruction_pointer ?? 0n), true);
  args.forEach((arg, i) => view.setBigUint64(16 + 8 * i, BigInt.asUintN(64, arg), true));
  return view;
}

/**
 * Checks a program the way the kernel does before loading it: 1 to 4096 instructions, only the opcodes
 * seccomp allows, loads aligned and inside `seccomp_data`, scratch slots in range, no division by a zero
 * constant, every jump landing inside the program, and a final `ret`.
 *
 * @throws {RangeError} describing the first problem.
 */
export function validateProgram(program: readonly SockFilter[]): void {
  if (program.length === 0 || program.length > BPF_MAXINSNS) {
    throw new RangeError(`A seccomp program has 1 to ${BPF_MAXINSNS} instructions, got ${program.length}`);
  }
  program.forEach((insn, pc) => {
    const where = `instruction ${pc} (code 0x${insn.code.toString(16)})`;
    const cls = insn.code & 0x07;
    switch (cls) {
      case BPF.LD:
      case BPF.LDX: {
        const mode = insn.code & 0xe0;
        const size = insn.code & 0x18;
        // Classic BPF has no `ldx abs`, only `ld abs`.
        if (mode === BPF.ABS && cls === BPF.LD && size === BPF.W) {
          if (insn.k % 4 !== 0 || insn.k >= SECCOMP_DATA_SIZE) {
            throw new RangeError(`${where}: load offset ${insn.k} is not an aligned word of seccomp_data`);
          }
        } else if (mode === BPF.MEM && size === BPF.W) {
          if (insn.k >= BPF_MEMWORDS) throw new RangeError(`${where}: scratch slot ${insn.k} out of range`);
        } else if (!((mode === BPF.IMM || mode === BPF.LEN) && size === BPF.W)) {
          throw new RangeError(`${where}: load not allowed in seccomp`);
        }
        return;
      }
      case BPF.ST:
      case BPF.STX:
        if (insn.code !== cls) throw new RangeError(`${where}: unknown store`);
        if (insn.k >= BPF_MEMWORDS) throw new RangeError(`${where}: scratch slot ${insn.k} out of range`);
        return;
      case BPF.ALU: {
        const op = insn.code & 0xf0;
        const byConstant = (insn.code & BPF.X) === 0;
        if (op > BPF.XOR || (insn.code & ~0xf8) !== BPF.ALU || (op === BPF.NEG && !byConstant)) {
          throw new RangeError(`${where}: unknown ALU op`);
        }
        if (byConstant && (op === BPF.DIV || op === BPF.MOD) && insn.k === 0) {
          throw new RangeError(`${where}: division by constant zero`);
        }
        return;
      }
      case BPF.JMP: {
        const op = insn.code & 0xf0;
        if (insn.code === (BPF.JMP | BPF.JA)) {
          if (pc + 1 + insn.k >= program.length) {
            throw new RangeError(`${where}: ja lands outside the program`);
          }
          return;
        }
        if (op > BPF.JSET || op === BPF.JA || (insn.code & ~0xf8) !== BPF.JMP) {
          throw new RangeError(`${where}: unknown jump`);
        }
        if (pc + 1 + Math.max(insn.jt, insn.jf) >= program.length) {
          throw new RangeError(`${where}: jump lands outside the program`);
        }
        return;
      }
      case BPF.RET: {
        const src = insn.code & 0x18;
        if ((insn.code & ~0x18) !== BPF.RET || (src !== BPF.K && src !== BPF.A)) {
          throw new RangeError(`${where}: unknown return`);
        }
        return;
      }
      case BPF.MISC:
        if (insn.code !== (BPF.MISC | BPF.TAX) && insn.code !== (BPF.MISC | BPF.TXA)) {
          throw new RangeError(`${where}: unknown misc op`);
        }
        return;
      default:
        throw new RangeError(`${where}: unknown class`);
    }
  });
  const last = program[program.length - 1];
  if (last === undefined || (last.code & 0x07) !== BPF.RET) {
    throw new RangeError("A seccomp program must end with ret");
  }
}

/** Executes a validated program; classic BPF only jumps forward, so it always terminates. */
function execute(program: readonly SockFilter[], data: DataView): number {
  let a = 0;
  let x = 0;
  const mem = new Uint32Array(BPF_MEMWORDS);
  let pc = 0;
  while (pc < program.length) {
    const insn = program[pc];
    if (insn === undefined) break;
    pc += 1;
    const cls = insn.code & 0x07;
    switch (cls) {
      case BPF.LD:
      case BPF.LDX: {
        const value = loadValue(insn, data, mem);
        if (cls === BPF.LD) a = value;
        else x = value;
        break;
      }
      case BPF.ST:
        mem[insn.k] = a;
        break;
      case BPF.STX:
        mem[insn.k] = x;
        break;
      case BPF.ALU:
        a = alu(insn, a, (insn.code & BPF.X) === BPF.X ? x : insn.k);
        break;
      case BPF.JMP: {
        if (insn.code === (BPF.JMP | BPF.JA)) {
          pc += insn.k;
          break;
        }
        const operand = (insn.code & BPF.X) === BPF.X ? x : insn.k;
        pc += compare(insn.code & 0xf0, a, operand) ? insn.jt : insn.jf;
        break;
      }
      case BPF.RET:
        return ((insn.code & 0x18) === BPF.A ? a : insn.k) >>> 0;
      case BPF.MISC:
        if (insn.code === (BPF.MISC | BPF.TAX)) x = a;
        else a = x;
        break;
      default:
        throw new RangeError(`Unknown BPF instruction class ${cls}`);
    }
  }
  throw new RangeError("The program ran past its end without ret");
}

function loadValue(insn: SockFilter, data: DataView, mem: Uint32Array): number {
  switch (insn.code & 0xe0) {
    case BPF.ABS:
      return data.getUint32(insn.k, true);
    case BPF.IMM:
      return insn.k >>> 0;
    case BPF.LEN:
      return SECCOMP_DATA_SIZE;
    case BPF.MEM:
      return mem[insn.k] ?? 0;
    default:
      throw new RangeError(`Unknown BPF load mode 0x${insn.code.toString(16)}`);
  }
}

/** One ALU operation on unsigned 32-bit values. */
function alu(insn: SockFilter, a: number, operand: number): number {
  const op = insn.code & 0xf0;
  switch (op) {
    case BPF.ADD:
      return (a + operand) >>> 0;
    case BPF.SUB:
      return (a - operand) >>> 0;
    case BPF.MUL:
      return Math.imul(a, operand) >>> 0;
    case BPF.DIV:
      return operand === 0 ? 0 : Math.floor(a / operand) >>> 0;
    case BPF.MOD:
      return operand === 0 ? 0 : (a % operand) >>> 0;
    case BPF.OR:
      return (a | operand) >>> 0;
    case BPF.AND:
      return (a & operand) >>> 0;
    case BPF.XOR:
      return (a ^ operand) >>> 0;
    // Shifts by 32 or more give 0 in the kernel's 32-bit ALU; JavaScript would shift modulo 32.
    case BPF.LSH:
      return operand >= 32 ? 0 : (a << operand) >>> 0;
    case BPF.RSH:
      return operand >= 32 ? 0 : a >>> operand;
    case BPF.NEG:
      return (-a) >>> 0;
    default:
      throw new RangeError(`Unknown BPF ALU op 0x${op.toString(16)}`);
  }
}

function compare(op: number, a: number, operand: number): boolean {
  const k = operand >>> 0;
  switch (op) {
    case BPF.JEQ:
      return a === k;
    case BPF.JGT:
      return a > k;
    case BPF.JGE:
      return a >= k;
    case BPF.JSET:
      return (a & k) !== 0;
    default:
      throw new RangeError(`Unknown BPF jump op 0x${op.toString(16)}`);
  }
}
