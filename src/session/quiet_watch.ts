/**
 * Quiet detection: an `idle` frame once output has been quiet for `idleMs`, and a `prompt` frame once it
 * has been quiet for `promptSettleMs` and the line the cursor is on matches a prompt pattern, or a shell
 * marked its prompt (OSC 133 `A`) since the last prompt was reported. Both are armed again by the next
 * output.
 *
 * @module
 */

/** The `regex` of a `prompt` a shell's own prompt mark reported (OSC 133 `A`), not a pattern. */
export const PROMPT_MARK = "OSC 133;A";

/** What the watch reports. */
export type QuietEvent =
  | { readonly type: "prompt"; readonly regex: string; readonly line: string }
  | { readonly type: "idle"; readonly dur_ms: number };

/** The session's side of the watch: its clock, its current line, and where events go. */
export interface QuietHost {
  /** Milliseconds on a monotonic clock. */
  now(): number;
  /** Runs `fn` once after `ms` (cancelled by the session when it ends). */
  later(ms: number, fn: () => void): void;
  /** The line the cursor is on (the prompt candidate). */
  currentLine(): string;
  emit(event: QuietEvent): void;
}

/** When the watch reports. */
export interface QuietOptions {
  /** Quiet time before `idle`; 0 turns `idle` off. */
  readonly idleMs: number;
  /** Quiet time before the current line is tested for a prompt. */
  readonly promptSettleMs: number;
  /** Prompt patterns; none turns `prompt` off. */
  readonly promptRegex: readonly RegExp[];
}

/** Watches a session's output for quiet. */
export class QuietWatch {
  readonly #options: QuietOptions;
  readonly #host: QuietHost;
  #lastOutputAt: number;
  #idleArmed: boolean;
  #promptArmed = false;
  /** A shell marked its prompt since the last `prompt` (the line then is a prompt whatever it reads). */
  #atMark = false;
  /** When the pending check runs (`Infinity`: none); a newer, earlier check supersedes it. */
  #dueAt = Infinity;
  #generation = 0;
  #stopped = false;

  /** Starts watching: `idle` is armed from the start (a program that prints nothing goes idle too). */
  constructor(options: QuietOptions, host: QuietHost) {
    this.#options = options;
    this.#host = host;
    this.#lastOutputAt = host.now();
    this.#idleArmed = options.idleMs > 0;
    this.#schedule();
  }

  /** Output arrived: both reports are armed again, counted from now. */
  output(): void {
    this.#lastOutputAt = this.#host.now();
    this.#idleArmed = this.#options.idleMs > 0;
    this.#promptArmed = this.#atMark || this.#options.promptRegex.length > 0;
    this.#schedule();
  }

  /** A shell marked the start of its prompt (OSC 133 `A`): `prompt` once its output settles. */
  promptMark(): void {
    this.#atMark = true;
    this.#promptArmed = true;
    this.#schedule();
  }

  /**
   * Input was sent: a prompt a shell marked before it is no longer where the shell waits (a report still
   * pending would arrive after the input, as if the input had led to it).
   */
  input(): void {
    if (!this.#atMark) return;
    this.#atMark = false;
    this.#promptArmed = this.#options.promptRegex.length > 0;
  }

  /** The session ended: nothing more is reported. */
  stop(): void {
    this.#stopped = true;
  }

  #schedule(): void {
    const deadlines: number[] = [];
    if (this.#promptArmed) deadlines.push(this.#options.promptSettleMs);
    if (this.#idleArmed) deadlines.push(this.#options.idleMs);
    if (deadlines.length === 0 || this.#stopped) return;
    const now = this.#host.now();
    const dueAt = this.#lastOutputAt + Math.min(...deadlines);
    // A check already due no later covers this one (output only pushes deadlines back). An idle check
    // pending from before the output must not delay the prompt check, which is due sooner.
    if (dueAt >= this.#dueAt && this.#dueAt >= now) return;
    this.#dueAt = dueAt;
    const generation = ++this.#generation;
    this.#host.later(Math.max(0, dueAt - now), () => {
      if (generation !== this.#generation) return; // Superseded by an earlier check.
      this.#dueAt = Infinity;
      this.#onQuiet();
    });
  }

  #onQuiet(): void {
    if (this.#stopped) return;
    const quiet = this.#host.now() - this.#lastOutputAt;
    if (this.#promptArmed && quiet >= this.#options.promptSettleMs) {
      this.#promptArmed = false;
      const line = this.#host.currentLine();
      if (this.#atMark) {
        this.#atMark = false;
        this.#host.emit({ type: "prompt", regex: PROMPT_MARK, line });
      } else {
        const regex = this.#options.promptRegex.find((r) => r.test(line));
        if (regex) this.#host.emit({ type: "prompt", regex: regex.source, line });
      }
    }
    if (this.#idleArmed && quiet >= this.#options.idleMs) {
      this.#idleArmed = false;
      this.#host.emit({ type: "idle", dur_ms: Math.round(quiet) });
    }
    this.#schedule();
  }
}
