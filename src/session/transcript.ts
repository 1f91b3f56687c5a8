/**
 * `Transcript`: reads a session's frames, keeps them, and waits for what a driver cares about (a frame,
 * some output, the exit) with timeouts. The expect-style layer on top of {@link Session}.
 *
 * @module
 */
import { TIMED_OUT, within } from "../clock.ts";
import { SessionError } from "../errors.ts";
import { concatBytes, fromBase64 } from "../frames/mod.ts";
import type { ExitFrame, Frame } from "../protocol/mod.ts";
import type { Session } from "./session.ts";

const encoder = new TextEncoder();
const lossy = new TextDecoder();

/** Reads a session's authoritative frame stream (`frames()`) and records it. */
export class Transcript {
  /** Every frame read so far, in order. */
  readonly frames: Frame[] = [];
  /** The session being read. */
  readonly session: Session;
  #text = "";
  #chunks: Uint8Array[] = [];
  #iterator: AsyncIterator<Frame>;
  #pending: Promise<IteratorResult<Frame>> | undefined;
  #onFrame: ((frame: Frame) => void) | undefined;

  /** Starts reading `session`; `onFrame` sees every frame as it is read (e.g. to log it). */
  constructor(session: Session, onFrame?: (frame: Frame) => void) {
    this.session = session;
    this.#iterator = session.frames();
    this.#onFrame = onFrame;
  }

  /** All output so far as text (binary frames decoded with replacement characters). */
  get text(): string {
    return this.#text;
  }

  /** All output bytes so far, exactly as the program wrote them. */
  get bytes(): Uint8Array {
    return concatBytes(this.#chunks);
  }

  /** Output after the first `since` characters of {@link text}. */
  textSince(since: number): string {
    return this.#text.slice(since);
  }

  /**
   * Reads until a frame matches `predicate` and returns it. Throws `E_IO` with the recent output when
   * `timeoutMs` passes first or the stream ends.
   */
  async until(predicate: (frame: Frame) => boolean, timeoutMs = 10_000, what = "a frame"): Promise<Frame> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const left = deadline - performance.now();
      if (left <= 0) throw this.#failure(`Timed out after ${timeoutMs} ms waiting for ${what}`);
      this.#pending ??= this.#iterator.next();
      const result = await within(this.#pending, left);
      if (result === TIMED_OUT) continue;
      this.#pending = undefined;
      if (result.done) throw this.#failure(`The session ended while waiting for ${what}`);
      this.#record(result.value);
      if (predicate(result.value)) return result.value;
    }
  }

  /** Waits until the output after `since` characters contains `needle` (a string or regex). */
  async output(needle: string | RegExp, timeoutMs = 10_000, since = 0): Promise<void> {
    const found = () => {
      const text = this.textSince(since);
      return typeof needle === "string" ? text.includes(needle) : needle.test(text);
    };
    if (!found()) await this.until(found, timeoutMs, `output ${String(needle)}`);
  }

  /** Waits for the `exit` frame (returns it at once if it was already read). */
  async exit(timeoutMs = 10_000): Promise<ExitFrame> {
    const seen = this.frames.find((f): f is ExitFrame => f.type === "exit");
    return seen ?? await this.until((f) => f.type === "exit", timeoutMs, "exit") as ExitFrame;
  }

  #record(frame: Frame): void {
    this.frames.push(frame);
    if (frame.type === "stdout") {
      const bytes = frame.binary ? fromBase64(frame.data) : encoder.encode(frame.data);
      this.#chunks.push(bytes);
      this.#text += frame.binary ? lossy.decode(bytes) : frame.data;
    }
    this.#onFrame?.(frame);
  }

  #failure(message: string): SessionError {
    return new SessionError("E_IO", message, { details: { recent_output: this.#text.slice(-500) } });
  }
}
