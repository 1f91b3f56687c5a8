/**
 * One session the keeper holds: its program's terminal (or socket), the output read from it and held until
 * the daemon acknowledges it, and the relay that carries output to the current daemon and its input back.
 * A relay is made per hand-over ({@link KeptSession.handOver}); while none is there, output is held up to
 * {@link HOLD_CAP} bytes, then reading pauses (the program blocks on its full terminal).
 *
 * @module
 */
import {
  closeQuietly,
  libc,
  type PollClient,
  reactor,
  setNonBlocking,
  shutdownWrite,
  unixSocketPair,
} from "../pty/mod.ts";
import type { KeeperEvent } from "../protocol/mod.ts";
import { InputEnd } from "./input_end.ts";

/** Output bytes held per session until the daemon acknowledges them; reading pauses beyond. */
export const HOLD_CAP = 4 * 1024 * 1024;
/** Bytes one read of a terminal takes (the size of {@link KeptHost.buffer}). */
export const READ_CHUNK = 64 * 1024;
/** Held output is kept in chunks of up to this size (see `KeptSession.#hold`). */
const MERGE_BYTES = 64 * 1024;
/** Input bytes taken from the relay while the terminal has not taken the previous ones. */
export const INPUT_CAP = 64 * 1024;

/** What a kept session needs of its keeper. */
export interface KeptHost {
  /** Sends `event` to the daemon with copies of `fds`, closing `owned` once sent or dropped. */
  send(event: KeeperEvent, fds?: readonly number[], owned?: readonly number[]): void;
  /** A notable event for the keeper's log. */
  log(text: string): void;
  /** Looks for ended children now. */
  reap(): void;
  /** Reused for every terminal read ({@link READ_CHUNK} bytes): garbage per read would grow the heap. */
  readonly buffer: Uint8Array;
  /** Reused for every relay read ({@link INPUT_CAP} bytes). */
  readonly input: Uint8Array;
}

/** What the program was spawned as. */
export interface KeptProgram {
  readonly id: string;
  readonly pid: number;
  readonly master: number;
  /** Where output is read and input written: the master, or the program's socket without a terminal. */
  readonly io: number;
  readonly ttyPath: string;
  /** False when the program runs on a socket (its input can then be ended: `close_input`). */
  readonly tty: boolean;
}

/** One kept session: its terminal, held output and relay. */
export class KeptSession implements KeptProgram {
  readonly id: string;
  readonly pid: number;
  readonly master: number;
  readonly io: number;
  readonly ttyPath: string;
  readonly tty: boolean;
  /** The program's wait status once it ended. */
  status: number | null = null;
  /** Where the input ends, once the daemon closed it. */
  readonly inputEnd = new InputEnd();
  /** Output not yet acknowledged: chunks from offset `heldFrom`. */
  #held: Uint8Array[] = [];
  #heldFrom = 0;
  #readTo = 0;
  /** The relay to the current daemon (-1: none) and how far output was sent on it. */
  #relay = -1;
  #sentTo = 0;
  /** Input read from the relay, not yet written to the terminal. */
  #input: Uint8Array | null = null;
  #eof = false;
  #relayClosed = false;
  #clients: PollClient[] = [];
  readonly #host: KeptHost;

  /** Holds `program` and starts reading its terminal. */
  constructor(program: KeptProgram, host: KeptHost) {
    this.id = program.id;
    this.pid = program.pid;
    this.master = program.master;
    this.io = program.io;
    this.ttyPath = program.ttyPath;
    this.tty = program.tty;
    this.#host = host;
    this.#watchTerminal();
  }

  /** The first output offset still held. */
  get heldFrom(): number {
    return this.#heldFrom;
  }

  /** The output offset read up to. */
  get readTo(): number {
    return this.#readTo;
  }

  /** A new relay to the daemon, output resent from `from`: the daemon gets the master and its end. */
  handOver(from: number, op: "spawned" | "resumed"): void {
    this.closeRelay();
    const [ours, theirs] = unixSocketPair("stream", "E_FD_PASSING");
    setNonBlocking(ours);
    setNonBlocking(theirs); // The flag travels with the descriptor: the daemon reads without blocking.
    this.#relay = ours;
    this.#relayClosed = false;
    this.#sentTo = from;
    const relayClient: PollClient = {
      fd: ours,
      interest: () => {
        const { POLLIN, POLLOUT } = libc().table.poll;
        if (this.#relay !== ours) return 0;
        const reading = this.#input === null && this.inputEnd.room(1) > 0;
        return (reading ? POLLIN : 0) | (this.#sentTo < this.#readTo ? POLLOUT : 0);
      },
      ready: (revents) => this.#relayReady(revents),
      fail: () => this.closeRelay(),
    };
    this.#clients.push(relayClient);
    reactor().add(relayClient);
    this.#host.send({ op, id: this.id, pid: this.pid, tty_path: this.ttyPath }, [this.master, theirs], [
      theirs,
    ]);
    this.#flush();
  }

  /** Ends the input after `after` bytes of the current relay (`close_input`). */
  closeInput(after: number): void {
    // Without a relay, input still on its way was lost with it: the end is now.
    this.inputEnd.close(this.#relay < 0 ? 0 : after);
    this.#endInput();
  }

  /** The relay is gone (or replaced): output not acknowledged stays held for the next one. */
  closeRelay(): void {
    if (this.#relay < 0) return;
    const relay = this.#relay;
    const client = this.#clients.find((c) => c.fd === relay);
    if (client !== undefined) {
      reactor().remove(client);
      this.#clients = this.#clients.filter((c) => c !== client);
    }
    closeQuietly(relay);
    this.#relay = -1;
    this.#input = null; // Input the daemon sent but the terminal never took is the daemon's to resend.
    this.inputEnd.relayClosed();
    this.#endInput();
  }

  /** Stops watching and closes the terminal (the caller has closed the relay and dropped its messages). */
  close(): void {
    for (const client of this.#clients) reactor().remove(client);
    closeQuietly(this.master);
    if (this.io !== this.master) closeQuietly(this.io);
  }

  /** The daemon's log holds output up to `offset`: what is before it is no longer held. */
  acknowledge(offset: number): void {
    while (this.#held.length > 0 && this.#heldFrom + this.#held[0]!.length <= offset) {
      this.#heldFrom += this.#held.shift()!.length;
    }
    const first = this.#held[0];
    if (first !== undefined && offset > this.#heldFrom) {
      this.#held[0] = first.subarray(offset - this.#heldFrom);
      this.#heldFrom = offset;
    }
    reactor().wake(); // Reading may resume.
  }

  /** Shuts down the writing side of the program's socket once the input before its end was written. */
  #endInput(): void {
    this.inputEnd.settle(this.#input === null, () => {
      shutdownWrite(this.io);
      this.#host.log(`session "${this.id}": its input was closed`);
    });
  }

  #watchTerminal(): void {
    const client: PollClient = {
      fd: this.io,
      interest: () => {
        const { POLLIN, POLLOUT } = libc().table.poll;
        if (this.#eof) return 0;
        const room = this.#readTo - this.#heldFrom < HOLD_CAP;
        return (room ? POLLIN : 0) | (this.#input !== null ? POLLOUT : 0);
      },
      ready: (revents) => this.#terminalReady(revents),
      fail: () => {
        this.#eof = true;
        this.#flush();
      },
    };
    this.#clients.push(client);
    reactor().add(client);
  }

  #terminalReady(revents: number): void {
    const { sym } = libc();
    if (this.#input !== null) this.#writeInput();
    const { POLLIN, POLLHUP, POLLERR } = libc().table.poll;
    if ((revents & (POLLIN | POLLHUP | POLLERR)) === 0) return;
    const buffer = this.#host.buffer;
    while (this.#readTo - this.#heldFrom < HOLD_CAP) {
      const n = Number(sym.read(this.io, buffer, BigInt(buffer.length)));
      if (n > 0) {
        this.#hold(buffer.subarray(0, n));
        continue;
      }
      if (n < 0 && libc().errno() === libc().table.errno.EAGAIN) break;
      if (n < 0 && libc().errno() === libc().table.errno.EINTR) continue;
      this.#eof = true; // 0 (socket closed) or EIO (every slave closed): the output ended.
      // Usually the program exiting: look for its status now and twice more shortly, rather than wait for
      // SIGCHLD to come through the event loop (milliseconds later).
      this.#host.reap();
      for (const ms of [1, 3]) setTimeout(() => this.#host.reap(), ms);
      break;
    }
    this.#flush();
  }

  /**
   * Holds `bytes` (copied). Small reads are merged into the last chunk while it is under
   * {@link MERGE_BYTES}: a chunk per 10-byte read would cost far more memory than {@link HOLD_CAP} says.
   */
  #hold(bytes: Uint8Array): void {
    const last = this.#held.at(-1);
    // Bytes already sent from the last chunk stay where they are: offsets are counted, not stored.
    if (last !== undefined && last.length + bytes.length <= MERGE_BYTES) {
      const merged = new Uint8Array(last.length + bytes.length);
      merged.set(last);
      merged.set(bytes, last.length);
      this.#held[this.#held.length - 1] = merged;
    } else {
      this.#held.push(bytes.slice());
    }
    this.#readTo += bytes.length;
  }

  /** Sends held output the relay has not had yet; closes the relay's writing side after the end. */
  #flush(): void {
    if (this.#relay < 0) return;
    const { sym } = libc();
    let offset = this.#heldFrom;
    for (const chunk of this.#held) {
      const end = offset + chunk.length;
      while (this.#sentTo < end) {
        const part = chunk.subarray(this.#sentTo - offset);
        const n = Number(sym.write(this.#relay, part, BigInt(part.length)));
        if (n > 0) {
          this.#sentTo += n;
          continue;
        }
        const errno = libc().errno();
        if (n < 0 && errno === libc().table.errno.EINTR) continue;
        if (n < 0 && errno !== libc().table.errno.EAGAIN) {
          this.#host.log(
            `session "${this.id}": relaying output failed with errno ${errno}; held for the next daemon`,
          );
          this.closeRelay();
        }
        reactor().wake();
        return;
      }
      offset = end;
    }
    if (this.#eof && !this.#relayClosed && this.#sentTo === this.#readTo) {
      this.#relayClosed = true;
      shutdownWrite(this.#relay);
    }
    reactor().wake();
  }

  #relayReady(revents: number): void {
    const { POLLIN, POLLOUT, POLLHUP, POLLERR } = libc().table.poll;
    if ((revents & POLLOUT) !== 0) this.#flush();
    if (this.#relay < 0 || (revents & (POLLIN | POLLHUP | POLLERR)) === 0 || this.#input !== null) return;
    // Not past the end of input (its bytes may come after the `close_input` that counts them).
    const scratch = this.#host.input;
    const room = this.inputEnd.room(scratch.length);
    if (room === 0) return;
    const n = Number(libc().sym.read(this.#relay, scratch, BigInt(room)));
    if (n > 0) {
      if (!this.inputEnd.take(n)) return; // After the end of input: dropped.
      this.#input = scratch.slice(0, n);
      this.#writeInput();
    } else if (n === 0 || (n < 0 && libc().errno() !== libc().table.errno.EAGAIN)) {
      this.closeRelay(); // The daemon is gone; its successor resumes from its log.
    }
  }

  #writeInput(): void {
    const input = this.#input;
    if (input === null) return;
    const n = Number(libc().sym.write(this.io, input, BigInt(input.length)));
    if (n === input.length) this.#input = null;
    else if (n > 0) this.#input = input.subarray(n);
    else if (n < 0 && libc().errno() !== libc().table.errno.EAGAIN) this.#input = null; // Terminal gone.
    this.#endInput();
    reactor().wake();
  }
}
