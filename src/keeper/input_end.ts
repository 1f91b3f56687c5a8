/**
 * The end of a kept session's input (`close_input`, `tty: false` only). The daemon says how many bytes of
 * input it wrote on the relay before it; the keeper reads no further than that, writes them to the
 * program, then shuts down the writing side of the program's socket, so that the program reads every
 * byte typed before end-of-file. The request and the input travel on different sockets (the request may
 * be read before the input it follows): the count is what orders them.
 *
 * @module
 */
import { ProtocolError } from "../errors.ts";

/** Where one session's input ends: counts the relay's input and says when to shut the socket down. */
export class InputEnd {
  /** Bytes of input read from the current relay. */
  #relayed = 0;
  /** The relay offset input ends at, once the daemon asked (null: the input is open). */
  #at: number | null = null;
  #shut = false;

  /** True once the daemon asked to end the input (a daemon that takes the session back is told). */
  get closed(): boolean {
    return this.#at !== null;
  }

  /** True once the socket's writing side was shut down. */
  get shut(): boolean {
    return this.#shut;
  }

  /**
   * The daemon asks to end the input after `after` bytes of the current relay. Asking again changes
   * nothing. Throws `E_PROTOCOL` when more than `after` bytes were read from the relay already: the
   * daemon's count and the keeper's disagree, and the program may have read input typed after the end.
   */
  close(after: number): void {
    if (this.#at !== null) return;
    if (after < this.#relayed) {
      throw new ProtocolError(
        "E_PROTOCOL",
        `Input was asked to end after byte ${after} of the relay, but ${this.#relayed} were relayed already`,
      );
    }
    this.#at = after;
  }

  /**
   * How many bytes may be read from the relay now, at most `max`: none while the bytes before the end
   * wait to be written (reading 0 bytes would look like the relay's end). After the end anything the
   * relay brings is read and dropped, so that its end is still seen.
   */
  room(max: number): number {
    if (this.#at === null || this.#shut) return max;
    return Math.min(max, this.#at - this.#relayed);
  }

  /** Counts `n` bytes read from the relay; false when they came after the end (they are dropped). */
  take(n: number): boolean {
    if (this.#shut) return false;
    this.#relayed += n;
    return true;
  }

  /** The relay is gone (its successor counts from 0): input it still held is lost, so the end is now. */
  relayClosed(): void {
    this.#relayed = 0;
    if (this.#at !== null) this.#at = 0;
  }

  /**
   * Calls `shutdown` once, when the end was asked for, every byte before it was read from the relay and
   * none waits to be written (`idle`).
   */
  settle(idle: boolean, shutdown: () => void): void {
    if (this.#at === null || this.#shut || !idle || this.#relayed < this.#at) return;
    this.#shut = true;
    shutdown();
  }
}
