/**
 * `OutputPath`: what happens to the bytes a program writes, in order. They count against the output budget,
 * are cut into whole characters, become `stdout` frames (text, or base64 when they are not UTF-8), and feed
 * the output tail (`last_lines`, prompts), the screen model and the recording. Once the budget is spent or
 * reading failed, output is read and dropped: reading never pauses again.
 *
 * @module
 */
import type { FrameBody } from "../protocol/mod.ts";
import { type Payload, payloadText, Utf8Chunker } from "../frames/mod.ts";

/** The parts output flows into (the session's own). */
export interface OutputHost {
  /** Counts output against the output budget (see `Budgets`). */
  readonly budgets: {
    admit(bytes: Uint8Array): Uint8Array;
    outputExceeded(): void;
  };
  /** Whether output is dropped, and the switch that drops it from now on (see `FlowControl`). */
  readonly flow: { readonly discarding: boolean; discard(): void };
  /** Told of every read, dropped or not: output is activity (see `QuietWatch`). */
  readonly activity: () => void;
  /** Emits a frame. */
  readonly emit: (body: FrameBody) => void;
  /** Every delivered text, as the tail, the screen and the recording take it. */
  readonly text: (text: string) => void;
}

/** The output side of one session. */
export class OutputPath {
  readonly #host: OutputHost;
  readonly #chunker = new Utf8Chunker();
  #read = 0;

  constructor(host: OutputHost) {
    this.#host = host;
  }

  /** Takes bytes read from the terminal (only read during the call: it may be a reused buffer). */
  read(bytes: Uint8Array): void {
    const host = this.#host;
    this.#read += bytes.length;
    host.activity();
    if (host.flow.discarding) return;
    const chunk = host.budgets.admit(bytes);
    if (chunk.length > 0) this.#deliver(this.#chunker.push(chunk));
    if (chunk.length < bytes.length) {
      host.flow.discard(); // Before the frames: reading never pauses again.
      host.budgets.outputExceeded();
    }
  }

  /** Bytes read that emitted frames hold (or that were dropped): all read but a character's cut part. */
  get consumed(): number {
    return this.#read - this.#chunker.pending;
  }

  /** The terminal reached its end: delivers a character left incomplete (as base64). */
  end(): void {
    if (!this.#host.flow.discarding) this.#deliver(this.#chunker.end());
  }

  #deliver(payload: Payload | null): void {
    if (payload === null) return;
    this.#host.emit(
      payload.binary
        ? { type: "stdout", data: payload.data, binary: true }
        : { type: "stdout", data: payload.data },
    );
    this.#host.text(payloadText(payload));
  }
}
