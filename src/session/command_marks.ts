/**
 * `CommandMarks`: command boundaries from a shell's OSC 133 marks (FinalTerm's semantic prompts: `A`
 * prompt start, `B` command start, `C` command executed, `D;STATUS` command finished), turned into
 * `command` frames with the command line typed, its exit status, its duration and the frames of its output.
 *
 * Marks may be split across reads; what is scanned is bounded (a mark is at most {@link MAX_MARK} bytes).
 *
 * @module
 */
import type { FrameBody } from "../protocol/mod.ts";

/** How every mark begins. */
const INTRODUCER = "\x1b]133;";
/** Longest OSC 133 sequence looked at. */
export const MAX_MARK = 64;
/** Longest command line kept. */
export const MAX_COMMAND = 4096;

/** What the marks need of the session. */
export interface CommandMarksHost {
  readonly emit: (body: FrameBody) => void;
  readonly now: () => number;
  /** The shell marked the start of its prompt (`A`): it waits for a command once its prompt is drawn. */
  readonly prompt?: () => void;
  /**
   * When set, only marks carrying `specter=NONCE` count (the integration Specter injected prints it): marks
   * that merely appear in output (a file being shown, a download) cannot end a command. Unset: any mark
   * counts (a shell with its own integration, such as fish).
   */
  readonly nonce?: string;
}

// deno-lint-ignore no-control-regex -- the marks are control sequences
const MARK = /\x1b\]133;([ABCD])(?:;([^\x07\x1b]*))?(?:\x07|\x1b\\)/g;

/** Reads the marks of one session's output. */
export class CommandMarks {
  readonly #host: CommandMarksHost;
  #carry = "";
  #typed = "";
  #command: string | undefined;
  #startedAt: number | null = null;
  #fromSeq = 0;

  constructor(host: CommandMarksHost) {
    this.#host = host;
  }

  /** Input typed into the terminal (the command line is what was typed between prompt and execution). */
  input(text: string): void {
    if (this.#typed.length < MAX_COMMAND) this.#typed += text.slice(0, MAX_COMMAND - this.#typed.length);
  }

  /** Output text (scanned for marks). `seq` is the frame it came in. */
  output(text: string, seq: number): void {
    if (this.#carry === "" && !text.includes(INTRODUCER)) {
      // The common case, coloured output without marks: one scan, and a look at the last few characters.
      this.#carry = cutIntroducer(text, 0);
      return;
    }
    const scanned = this.#carry + text;
    this.#carry = "";
    MARK.lastIndex = 0;
    let end = 0;
    for (let match = MARK.exec(scanned); match !== null; match = MARK.exec(scanned)) {
      this.#mark(match[1]!, match[2], seq);
      end = MARK.lastIndex;
    }
    this.#carry = unfinishedMark(scanned, end);
  }

  #mark(kind: string, argument: string | undefined, seq: number): void {
    const fields = argument === undefined ? [] : argument.split(";");
    const nonce = this.#host.nonce;
    if (nonce !== undefined && !fields.includes(`specter=${nonce}`)) return;
    switch (kind) {
      case "A":
        this.#typed = "";
        this.#host.prompt?.();
        return;
      case "B":
        this.#typed = "";
        return;
      case "C":
        this.#command = commandLine(this.#typed);
        this.#typed = "";
        this.#startedAt = this.#host.now();
        this.#fromSeq = seq; // The frame with the mark: what follows it in that frame is output already.
        return;
      case "D": {
        if (this.#startedAt === null) return; // The first prompt's D ends no command.
        const status = fields.length === 0 || !/^-?\d+$/.test(fields[0]!)
          ? NaN
          : Number.parseInt(fields[0]!, 10);
        this.#host.emit({
          type: "command",
          ...(this.#command === undefined ? {} : { command: this.#command }),
          exit_code: Number.isInteger(status) ? status : null,
          duration_ms: Math.round((this.#host.now() - this.#startedAt) * 1000) / 1000,
          output_from_seq: this.#fromSeq,
          output_to_seq: Math.max(this.#fromSeq, seq),
          reported_by: nonce === undefined ? "output" : "shell",
        });
        this.#startedAt = null;
        this.#command = undefined;
        return;
      }
    }
  }
}

/** The start of a mark left unfinished at the end of `text` (after `from`), to scan again with more. */
function unfinishedMark(text: string, from: number): string {
  const open = text.lastIndexOf(INTRODUCER);
  if (open >= from && text.length - open < MAX_MARK) {
    const rest = text.slice(open);
    if (!rest.includes("\x07") && !rest.includes("\x1b\\")) return rest;
  }
  return cutIntroducer(text, from);
}

/** The introducer of a mark cut short at the very end of `text` (after `from`): "\x1b", "\x1b]1", …; else "". */
function cutIntroducer(text: string, from: number): string {
  for (let n = Math.min(INTRODUCER.length - 1, text.length - from); n > 0; n--) {
    if (INTRODUCER.startsWith(text.slice(-n))) return text.slice(-n);
  }
  return "";
}

/** The command line from what was typed: up to the Enter, line editing aside. */
function commandLine(typed: string): string | undefined {
  const line = typed.split(/\r|\n/)[0] ?? "";
  // deno-lint-ignore no-control-regex -- keys such as arrows are escape sequences, not command text
  const text = line.replace(/\x1b\[[0-9;]*[A-Za-z~]|\x1b[O][A-Z]/g, "").replace(/[\x00-\x1f\x7f]/g, "")
    .trim();
  return text === "" ? undefined : text;
}
