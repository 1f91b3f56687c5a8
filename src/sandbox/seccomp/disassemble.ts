/**
 * A readable listing of a seccomp program, one line per instruction, in the style of `bpf_dbg` /
 * `seccomp-tools`: jump targets are absolute instruction numbers, and `ret` values are spelled out.
 *
 * @module
 */
import { AUDIT_ARCH, type SeccompArch, X32_SYSCALL_BIT } from "./arch.ts";
import { BPF, decodeProgram, SECCOMP_RET, type SockFilter } from "./bpf.ts";
import { ERRNO, type SyscallName, SYSCALLS } from "./syscalls.ts";

/**
 * Disassembles a program (bytes from `compileSeccomp`). With `arch`, comparisons against `nr` name the
 * syscall.
 *
 * @example
 * ```
 * 0000: ld [4]                   ; arch
 * 0001: jeq #0xc000003e jt 0003 jf 0002 ; AUDIT_ARCH x86_64
 * 0002: ret KILL_PROCESS
 * ```
 */
export function disassemble(program: Uint8Array, arch?: SeccompArch): string[] {
  const insns = decodeProgram(program);
  const width = Math.max(4, String(insns.length).length);
  const lines: string[] = [];
  const holding = accumulatorContents(insns);
  insns.forEach((insn, pc) => {
    const { text, loads } = instruction(insn, pc, width);
    const comment = loads ?? commentFor(insn, holding[pc] ?? null, arch);
    lines.push(`${String(pc).padStart(width, "0")}: ${text}${comment === null ? "" : ` ; ${comment}`}`);
  });
  return lines;
}

/**
 * Which `seccomp_data` field the accumulator holds before each instruction, or `null` when unknown or
 * different along different paths. Classic BPF only jumps forward, so one pass in order sees every
 * predecessor of an instruction before the instruction itself.
 */
function accumulatorContents(insns: readonly SockFilter[]): (string | null)[] {
  // undefined: no path reaches the instruction yet.
  const incoming: (string | null | undefined)[] = new Array(insns.length).fill(undefined);
  incoming[0] = null;
  const merge = (at: number, state: string | null): void => {
    if (at >= insns.length) return;
    const current = incoming[at];
    incoming[at] = current === undefined || current === state ? state : null;
  };
  insns.forEach((insn, pc) => {
    const before = incoming[pc] ?? null;
    const cls = insn.code & 0x07;
    switch (cls) {
      case BPF.RET:
        return;
      case BPF.JMP:
        if (insn.code === (BPF.JMP | BPF.JA)) {
          merge(pc + 1 + insn.k, before);
        } else {
          merge(pc + 1 + insn.jt, before);
          merge(pc + 1 + insn.jf, before);
        }
        return;
      case BPF.LD:
        merge(pc + 1, (insn.code & 0xe0) === BPF.ABS ? fieldName(insn.k) : null);
        return;
      case BPF.ALU:
      case BPF.MISC:
        merge(pc + 1, null);
        return;
      default: // ldx, st, stx leave the accumulator alone.
        merge(pc + 1, before);
    }
  });
  return incoming.map((state) => state ?? null);
}

/** A `SECCOMP_RET_*` value in words, e.g. `ERRNO(1)` or `ALLOW`. */
export function describeReturn(value: number): string {
  const action = (value & SECCOMP_RET.ACTION_FULL) >>> 0;
  const data = value & SECCOMP_RET.DATA;
  for (const name of ["KILL_PROCESS", "TRAP", "ERRNO", "USER_NOTIF", "TRACE", "LOG", "ALLOW"] as const) {
    if (action === SECCOMP_RET[name]) {
      if (name === "ERRNO") {
        const errno = Object.entries(ERRNO).find(([, v]) => v === data)?.[0];
        return errno === undefined ? `ERRNO(${data})` : `ERRNO(${data} ${errno})`;
      }
      return data === 0 ? name : `${name}(${data})`;
    }
  }
  return action === SECCOMP_RET.KILL_THREAD ? "KILL_THREAD" : `0x${(value >>> 0).toString(16)}`;
}

function instruction(insn: SockFilter, pc: number, width: number): { text: string; loads?: string } {
  const k = insn.k >>> 0;
  const hex = `#0x${k.toString(16)}`;
  const target = (offset: number): string => String(pc + 1 + offset).padStart(width, "0");
  const cls = insn.code & 0x07;
  switch (cls) {
    case BPF.LD:
    case BPF.LDX: {
      const reg = cls === BPF.LD ? "ld" : "ldx";
      switch (insn.code & 0xe0) {
        case BPF.ABS:
          return { text: `${reg} [${k}]`, loads: cls === BPF.LD ? fieldName(k) : undefined };
        case BPF.IMM:
          return { text: `${reg} ${hex}` };
        case BPF.LEN:
          return { text: `${reg} len` };
        case BPF.MEM:
          return { text: `${reg} M[${k}]` };
        default:
          return { text: `.data 0x${insn.code.toString(16)} (unknown load)` };
      }
    }
    case BPF.ST:
      return { text: `st M[${k}]` };
    case BPF.STX:
      return { text: `stx M[${k}]` };
    case BPF.ALU: {
      const name = ["add", "sub", "mul", "div", "or", "and", "lsh", "rsh", "neg", "mod", "xor"][
        (insn.code & 0xf0) >> 4
      ];
      if (name === "neg") return { text: "neg" };
      const operand = (insn.code & BPF.X) === BPF.X ? "x" : hex;
      return { text: name === undefined ? `.data 0x${insn.code.toString(16)}` : `${name} ${operand}` };
    }
    case BPF.JMP: {
      if (insn.code === (BPF.JMP | BPF.JA)) return { text: `ja ${target(k)}` };
      const name = ["ja", "jeq", "jgt", "jge", "jset"][(insn.code & 0xf0) >> 4];
      const operand = (insn.code & BPF.X) === BPF.X ? "x" : hex;
      return { text: `${name ?? "j?"} ${operand} jt ${target(insn.jt)} jf ${target(insn.jf)}` };
    }
    case BPF.RET:
      return { text: (insn.code & 0x18) === BPF.A ? "ret a" : `ret ${describeReturn(k)}` };
    case BPF.MISC:
      return { text: insn.code === (BPF.MISC | BPF.TAX) ? "tax" : "txa" };
    default:
      return { text: `.data 0x${insn.code.toString(16)}` };
  }
}

/** The `seccomp_data` field at a byte offset (little-endian). */
function fieldName(offset: number): string {
  if (offset === 0) return "nr";
  if (offset === 4) return "arch";
  if (offset === 8) return "instruction_pointer (low 32 bits)";
  if (offset === 12) return "instruction_pointer (high 32 bits)";
  const arg = Math.floor((offset - 16) / 8);
  return `args[${arg}] (${offset % 8 === 0 ? "low" : "high"} 32 bits)`;
}

function commentFor(insn: SockFilter, holding: string | null, arch: SeccompArch | undefined): string | null {
  if ((insn.code & 0x07) !== BPF.JMP || insn.code === (BPF.JMP | BPF.JA) || (insn.code & BPF.X) === BPF.X) {
    return null;
  }
  const k = insn.k >>> 0;
  if (holding === "arch") {
    const name = Object.entries(AUDIT_ARCH).find(([, v]) => v === k)?.[0];
    return name === undefined ? null : `AUDIT_ARCH ${name}`;
  }
  if (holding === "nr" && (insn.code & 0xf0) === BPF.JGE && k === X32_SYSCALL_BIT) {
    return "x32 syscall numbers";
  }
  if (holding === "nr" && arch !== undefined && (insn.code & 0xf0) === BPF.JEQ) {
    const names = (Object.keys(SYSCALLS) as SyscallName[]).filter((n) => SYSCALLS[n][arch] === k);
    return names.length === 0 ? null : names.join(", ");
  }
  return null;
}
