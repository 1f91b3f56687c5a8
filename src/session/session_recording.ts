/**
 * `SessionRecording`: a session's asciicast events (output, and input and resizes when asked), timed from
 * the session's start. A recorder that fails is reported once, as an `error` frame, and the session goes on
 * without it: a full disk must not end the program.
 *
 * @module
 */
import type { SpecterError } from "../errors.ts";

/** The writer events go to (`CastWriter`). */
export interface EventWriter {
  event(seconds: number, code: "o" | "i" | "r", data: string): void;
  close(): void;
}

/** Events of one session. */
export class SessionRecording {
  readonly #writer: EventWriter | null;
  readonly #startedAt: number;
  readonly #report: (code: string, message: string, details: Record<string, unknown>) => void;

  /**
   * `writer` null: nothing is recorded. `startedAt` is the session's start on `performance.now()`'s clock;
   * `report` emits the error frame.
   */
  constructor(
    writer: EventWriter | null,
    startedAt: number,
    report: (code: string, message: string, details: Record<string, unknown>) => void,
  ) {
    this.#writer = writer;
    this.#startedAt = startedAt;
    this.#report = report;
  }

  /** Records one event now. */
  event(code: "o" | "i" | "r", text: string): void {
    if (!this.#writer) return;
    try {
      this.#writer.event((performance.now() - this.#startedAt) / 1000, code, text);
    } catch (error: unknown) {
      // Once: the writer stops at its last whole line after a failure and ignores later events.
      this.#report("E_RECORD", (error as Error).message, { ...(error as SpecterError).details });
    }
  }

  /** Ends the recording (its last line is whole). */
  close(): void {
    this.#writer?.close();
  }
}
