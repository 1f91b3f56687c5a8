/**
 * `TerminalReader`: reads a session's terminal (its master side), on the process's reader thread when
 * the session asks for it (`readerThread`), else on the JS thread through the poll reactor, and tells the
 * session what it read and when the output ended. It also carries the session's interest in POLLOUT, for
 * input that waits for the terminal to take it.
 *
 * Reading pauses while the session says it is blocked (its consumer or its terminal model is behind):
 * the program then blocks in `write`, and nothing is buffered without bound. One call reads at most
 * {@link READ_TURN_BYTES} (or for {@link READ_TURN_MS}) before timers and other sessions get a turn.
 *
 * @module
 */
import { libc, type PollClient, reactor, type ReaderChannel, readerThread } from "../pty/mod.ts";

/** Bytes read for one session before others get a turn. */
export const READ_TURN_BYTES = 1 << 20;
/**
 * Milliseconds one session's turn may take before timers and other sessions get theirs: output dense in
 * control sequences costs far more per byte than text (its tail, clamp and frames), and a turn of 1 MiB
 * of it held the event loop for 100 ms and more, so that a `--timeout` fired late.
 */
export const READ_TURN_MS = 8;
/** One buffer serves every session (reading is synchronous); output is handed on before the next read. */
const READ_BUFFER = new Uint8Array(64 * 1024);
/** Bytes asked per `read()` on the JS thread (see {@link TerminalReader.readAvailable}). */
const READ_CHUNK = 4096;
const READ_CHUNK_BIG = BigInt(READ_CHUNK);

/** What a {@link TerminalReader} needs from its session. */
export interface TerminalReaderHooks {
  /** Output read (the bytes are only valid during the call). */
  output(bytes: Uint8Array): void;
  /** The output ended (EOF or EIO: every holder of the terminal's other side closed it). Called once. */
  eof(): void;
  /** True while reading must pause. */
  blocked(): boolean;
  /** True while input waits for the terminal to take it (POLLOUT is of interest). */
  wantsWrite(): boolean;
  /** The terminal can take input (POLLOUT). */
  writable(): void;
  /** Reading failed unexpectedly (the reactor dropped the session, or the thread's callback threw). */
  fail(error: unknown): void;
  /** The reader thread let go of the terminal after its EOF (it may be closed now). */
  released(): void;
  /** Runs `fn` after `ms` (the session's timers). */
  later(ms: number, fn: () => void): void;
}

/** Reads one session's terminal (see the module documentation). */
export class TerminalReader {
  readonly #fd: number;
  readonly #hooks: TerminalReaderHooks;
  /** The reader thread's channel while the thread reads (until it fails); else null. */
  #channel: ReaderChannel | null = null;
  #eof = false;
  /**
   * A turn ended and its next one is queued with {@link TerminalReaderHooks.later}: a notification that
   * comes first (in the same batch of callbacks) waits for it, or the turn would be two turns long.
   */
  #yielded = false;
  readonly #client: PollClient;

  /**
   * The reader as the reactor's client: methods on a prototype all readers share, where an object of
   * closures cost ~0.25 KiB per session (a thousand idle sessions live in one process: issue 27).
   */
  static readonly #Client = class ReaderClient implements PollClient {
    readonly fd: number;
    readonly #reader: TerminalReader;
    constructor(reader: TerminalReader, fd: number) {
      this.#reader = reader;
      this.fd = fd;
    }
    interest(): number {
      return this.#reader.#interest();
    }
    ready(revents: number): void {
      this.#reader.#ready(revents);
    }
    fail(error: unknown): void {
      this.#reader.#hooks.fail(error);
    }
  };

  /** Starts reading `fd` (non-blocking; the caller keeps owning it and closes it once {@link closable}). */
  constructor(fd: number, useThread: boolean, hooks: TerminalReaderHooks) {
    this.#fd = fd;
    this.#hooks = hooks;
    this.#client = new TerminalReader.#Client(this, fd);
    if (useThread) this.#channel = readerThread().open(fd, () => this.#onChannel());
    reactor().add(this.#client); // With a reader thread, only for input that has to wait for POLLOUT.
  }

  /** True once the output ended (or reading was stopped). */
  get eof(): boolean {
    return this.#eof;
  }

  /** Reading may go on (no longer paused): poll again, or take from the reader thread's ring. */
  wake(): void {
    reactor().wake();
    if (this.#channel !== null) queueMicrotask(() => this.#onChannel());
  }

  /** Input started waiting for POLLOUT: poll with it. */
  pollAgain(): void {
    reactor().wake();
  }

  /** Reads until EAGAIN, EOF/EIO, a pause, or the end of this session's turn. */
  readAvailable(): void {
    if (this.#channel?.active) {
      this.#pull();
      return;
    }
    const lib = libc();
    const { EAGAIN, EINTR } = lib.table.errno;
    let turn = 0;
    const until = performance.now() + READ_TURN_MS;
    while (!this.#eof && !this.#hooks.blocked()) {
      let filled = 0;
      let drained = false;
      while (filled < READ_BUFFER.length) {
        // Ask for at most READ_CHUNK per call: large tty reads measured 30–40 % slower end to end (they
        // hold the tty longer and the writer stalls), while frames still coalesce up to READ_BUFFER.
        const room = READ_BUFFER.length - filled;
        const ask = room >= READ_CHUNK ? READ_CHUNK_BIG : BigInt(room); // Never past the buffer's end.
        const n = Number(lib.sym.read(this.#fd, READ_BUFFER.subarray(filled), ask));
        if (n > 0) {
          filled += n;
          continue;
        }
        const errno = n === 0 ? 0 : lib.errno();
        if (errno === EINTR) continue;
        if (errno === EAGAIN) drained = true;
        else this.#eof = true; // 0 (EOF) or EIO: every holder of the slave side has closed it.
        break;
      }
      if (filled > 0) this.#hooks.output(READ_BUFFER.subarray(0, filled));
      turn += filled;
      if (drained || turn >= READ_TURN_BYTES || performance.now() >= until) break;
    }
    if (this.#eof) this.#ended();
  }

  /**
   * The output did not end in time (someone outside the session holds the terminal open). Returns true
   * when the reader thread was asked to let go first (its EOF follows; ask again later); otherwise reads
   * what is left and ends the output.
   */
  giveUp(): boolean {
    if (this.#eof) return false;
    if (this.#channel?.active) {
      if (this.#channel.ended) {
        // The thread let go already, but its end was not taken (a missed notification): take it now.
        this.#pull();
        return !this.#eof;
      }
      this.#channel.release();
      return true;
    }
    this.readAvailable();
    if (!this.#eof) {
      this.#eof = true;
      this.#ended();
    }
    return false;
  }

  /** Stops reading for good after a failure (the output does not end normally: no {@link TerminalReaderHooks.eof}). */
  stop(): void {
    this.#eof = true;
    reactor().remove(this.#client); // Done already when the reactor called; not when the reader thread did.
  }

  /**
   * True once the terminal may be closed: the reader thread (if any) has let go of it. Asks it to when
   * not; {@link TerminalReaderHooks.released} follows.
   */
  closable(): boolean {
    if (this.#channel === null || this.#channel.ended) return true;
    this.#channel.release(); // The terminal is closed next: the thread must have let go of it first.
    return this.#channel.ended;
  }

  #ended(): void {
    reactor().remove(this.#client);
    this.#hooks.eof();
  }

  #interest(): number {
    const { POLLIN, POLLOUT } = libc().table.poll;
    if (this.#eof) return 0;
    const reading = !this.#hooks.blocked() && this.#channel?.active !== true;
    return (reading ? POLLIN : 0) | (this.#hooks.wantsWrite() ? POLLOUT : 0);
  }

  #ready(revents: number): void {
    const { POLLOUT } = libc().table.poll;
    if (revents & POLLOUT) this.#hooks.writable();
    if (!this.#hooks.blocked() && (revents & ~POLLOUT) !== 0) this.readAvailable();
  }

  #onChannel(): void {
    try {
      this.#pull();
    } catch (error: unknown) {
      this.#hooks.fail(error); // As when the reactor's call into this session throws.
    }
  }

  /**
   * Takes what the reader thread read, until none is left, a pause, or the end of this session's turn; at
   * its EOF, ends the output. When the thread failed, takes the rest and goes on reading on the JS thread.
   */
  #pull(): void {
    const channel = this.#channel;
    if (channel === null || this.#yielded) return; // When yielded, the queued turn takes it.
    if (!channel.active) {
      if (channel.failed) this.#channel = null; // It never started: reading stays on the JS thread.
      return;
    }
    if (this.#eof) {
      if (channel.ended) this.#hooks.released(); // It was waiting for the thread to let go of the terminal.
      return;
    }
    let turn = 0;
    const until = performance.now() + READ_TURN_MS;
    while (!this.#hooks.blocked()) {
      const n = channel.take(READ_BUFFER);
      if (n > 0) {
        this.#hooks.output(READ_BUFFER.subarray(0, n));
        turn += n;
        if (turn < READ_TURN_BYTES && performance.now() < until) continue;
        this.#yielded = true;
        this.#hooks.later(0, () => { // Other sessions' turn first; the rest stays in the ring.
          this.#yielded = false;
          this.#onChannel();
        });
        return;
      }
      if (!channel.done) return; // More comes with the next notification.
      if (channel.failed) {
        this.#channel = null;
        reactor().wake(); // POLLIN is of interest again.
        this.readAvailable();
        return;
      }
      this.#eof = true;
      this.#ended();
      return;
    }
  }
}
