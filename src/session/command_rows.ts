/**
 * `CommandRows`: turns a session's frames into rows of the command log (`history/`): one row per OSC 133
 * `command` frame of a shell, or, for a program that marked no command (`exec`, an agent's
 * `exec_command`, any non-shell), one row for the program itself at its exit. Every host that runs
 * sessions feeds it (the daemon, `specter run` and `exec`, `specter agent`), so the log is always on.
 *
 * @module
 */
import { libc, signalName } from "../pty/mod.ts";
import type { AuthorKind, CommandLog, Reporter } from "../history/mod.ts";
import type { ExitFrame, Frame } from "../protocol/mod.ts";
import { plainText } from "./plain_text.ts";

/** Output kept for the rows (the log caps each row's output far below this). */
const RECENT_OUTPUT_BYTES = 256 * 1024;

/** What every row of one session says. */
export interface CommandRowsContext {
  /** The session's name or id. */
  readonly session: string;
  /** The program as started (the row's command text when it marks no command). */
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly policyHash: string | null;
  readonly authorKind: AuthorKind;
  readonly author: string | null;
}

/** The command log rows of one session. */
export class CommandRows {
  readonly #log: CommandLog;
  readonly #context: CommandRowsContext;
  readonly #onError: (error: unknown) => void;
  #recent: { seq: number; text: string }[] = [];
  #recentBytes = 0;
  #commands = 0;

  /** `onError`: told when a row could not be written (the session goes on). */
  constructor(log: CommandLog, context: CommandRowsContext, onError: (error: unknown) => void) {
    this.#log = log;
    this.#context = context;
    this.#onError = onError;
  }

  /** The frames a previous host already saw (a session taken back): its output and commands so far. */
  seed(history: readonly Frame[]): void {
    for (const frame of history) {
      if (frame.type === "stdout") this.#keep(frame.seq, frame.binary === true ? "" : frame.data);
      if (frame.type === "command") this.#commands++;
    }
  }

  /** Takes every frame of the session, in order. */
  frame(frame: Frame): void {
    switch (frame.type) {
      case "stdout":
        this.#keep(frame.seq, frame.binary === true ? "" : frame.data);
        return;
      case "command": {
        this.#commands++;
        const output = this.#recent.filter((f) =>
          f.seq >= frame.output_from_seq && f.seq <= frame.output_to_seq
        )
          .map((f) => f.text).join("");
        const code = frame.exit_code;
        this.#record({
          startedAt: frame.ts - frame.duration_ms / 1000,
          endedAt: frame.ts,
          command: frame.command ?? "",
          exitCode: code,
          // A shell reports a command a signal ended as 128 + its number.
          signal: code !== null && code > 128 && code < 128 + 65
            ? signalName(code - 128, libc().table)
            : null,
          output: plainText(output),
          source: "osc133",
          reportedBy: frame.reported_by,
          seqFrom: frame.output_from_seq,
          seqTo: frame.output_to_seq,
        });
        return;
      }
      case "exit":
        if (this.#commands === 0) this.#recordProgram(frame);
        return;
      default:
        return;
    }
  }

  #keep(seq: number, text: string): void {
    this.#recent.push({ seq, text });
    this.#recentBytes += text.length;
    while (this.#recentBytes > RECENT_OUTPUT_BYTES && this.#recent.length > 1) {
      this.#recentBytes -= this.#recent.shift()!.text.length;
    }
  }

  /** The program is the one command: from start to exit. */
  #recordProgram(exit: ExitFrame): void {
    const argv = this.#context.argv;
    const shellC = argv.length === 3 && /(^|\/)(ba|z|da)?sh$/.test(argv[0]!) && argv[1] === "-c";
    this.#record({
      startedAt: exit.ts - exit.duration_ms / 1000,
      endedAt: exit.ts,
      command: shellC ? argv[2]! : argv.map(shellWord).join(" "),
      exitCode: exit.code,
      signal: exit.signal,
      output: plainText(this.#recent.map((f) => f.text).join("")),
      source: "exec",
      reportedBy: "specter",
      seqFrom: null,
      seqTo: null,
    });
  }

  #record(row: {
    startedAt: number;
    endedAt: number;
    command: string;
    exitCode: number | null;
    signal: string | null;
    output: string;
    source: "osc133" | "exec";
    reportedBy: Reporter;
    seqFrom: number | null;
    seqTo: number | null;
  }): void {
    const context = this.#context;
    try {
      this.#log.record({
        session: context.session,
        cwd: context.cwd,
        policyHash: context.policyHash,
        authorKind: context.authorKind,
        author: context.author,
        ...row,
      });
    } catch (error: unknown) {
      this.#onError(error);
    }
  }
}

/** A word as a shell would need it quoted (for the command log's text of an argv). */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replaceAll("'", `'"'"'`)}'`;
}
