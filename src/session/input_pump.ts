/**
 * Input on its way to the program: what was typed but not yet written to the terminal, written as the
 * program reads. A program that does not read leaves the terminal's buffer (a few KiB) full; the rest
 * waits here, counted, so that a driver can hold its own source back ({@link InputPump.pending}).
 *
 * @module
 */

import { libc } from "../pty/mod.ts";

/** The outcome of one non-blocking write: bytes written, or why none were. */
export type WriteOutcome = number | "again" | "interrupted" | "gone";

/** Writes to the terminal without blocking (`write(2)` on the master side in a session). */
export type NonBlockingWrite = (chunk: Uint8Array) => WriteOutcome;

/** Typed input queued for the terminal. */
export class InputPump {
  readonly #write: NonBlockingWrite;
  #queue: Uint8Array[] = [];
  #pending = 0;
  #written = 0;
  /** End of input asked for: called once everything queued before it was written. */
  #end: (() => void) | null = null;

  constructor(write: NonBlockingWrite) {
    this.#write = write;
  }

  /** Bytes typed but not yet written to the terminal. */
  get pending(): number {
    return this.#pending;
  }

  /** Bytes written to the terminal so far, in all. */
  get written(): number {
    return this.#written;
  }

  /** True while input waits for the program (the session then asks the reactor for POLLOUT). */
  get waiting(): boolean {
    return this.#queue.length > 0;
  }

  /** True once end of input was asked for: nothing more may be queued. */
  get ended(): boolean {
    return this.#end !== null;
  }

  /**
   * Ends the input: `shutdown` runs once every byte queued so far is written (at once when none waits),
   * so the program reads all of it before end-of-file.
   */
  end(shutdown: () => void): void {
    if (this.#end !== null) return;
    let done = false;
    this.#end = () => {
      if (done) return;
      done = true;
      shutdown();
    };
    this.flush();
  }

  /** Queues `bytes` and writes what the terminal takes now. */
  push(bytes: Uint8Array): void {
    this.#queue.push(bytes);
    this.#pending += bytes.length;
    this.flush();
  }

  /**
   * Writes queued input until the terminal takes no more. Input for a terminal that is gone (EIO) is
   * dropped: nobody can read it any more.
   */
  flush(): void {
    this.#flushQueue();
    if (this.#queue.length === 0) this.#end?.();
  }

  #flushQueue(): void {
    while (this.#queue.length > 0) {
      const chunk = this.#queue[0]!;
      const outcome = this.#write(chunk);
      if (outcome === "interrupted") continue;
      if (outcome === "again") return; // The program is not reading: wait for POLLOUT.
      if (outcome === "gone") {
        this.#queue = [];
        this.#pending = 0;
        return;
      }
      if (outcome <= 0) return;
      this.#pending -= outcome;
      this.#written += outcome;
      if (outcome === chunk.length) this.#queue.shift();
      else this.#queue[0] = chunk.subarray(outcome);
    }
  }
}

/** One non-blocking `write(2)` to `fd` (the terminal's master side), as an {@link InputPump} needs it. */
export function terminalWrite(fd: number): NonBlockingWrite {
  return (chunk) => {
    const lib = libc();
    const written = Number(lib.sym.write(fd, chunk, BigInt(chunk.length)));
    if (written >= 0) return written;
    const errno = lib.errno();
    if (errno === lib.table.errno.EINTR) return "interrupted";
    return errno === lib.table.errno.EAGAIN ? "again" : "gone";
  };
}
