/**
 * A connected, non-blocking socket descriptor read and written on the process's poll reactor: what a
 * client has when it made the connection through libc (to check its peer's credentials first, which a
 * `Deno.UnixConn` cannot: it exposes no descriptor).
 *
 * Bounded: reads go to {@link FdStream.onData} a chunk at a time (at most {@link FD_STREAM_CHUNK} bytes,
 * a fresh copy each), and bytes queued for writing never pass {@link MAX_QUEUED_BYTES}: a write beyond
 * that is refused rather than held.
 *
 * @module
 */
import { SpawnError } from "../errors.ts";
import { closeQuietly, libc } from "./_libc.ts";
import { type PollClient, reactor } from "./reactor.ts";

/** Largest chunk read at once. */
export const FD_STREAM_CHUNK = 64 * 1024;
/** Bytes a stream holds for writing at most (the peer does not read). */
export const MAX_QUEUED_BYTES = 64 * 1024 * 1024;

interface Waiter {
  /** Resolved once this many bytes (counted from the start) were written. */
  readonly upTo: number;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/** A connected descriptor read and written without blocking; it owns (and closes) the descriptor. */
export class FdStream {
  readonly #fd: number;
  readonly #client: PollClient;
  readonly #buffer = new Uint8Array(FD_STREAM_CHUNK);
  #out: Uint8Array[] = [];
  #queued = 0;
  #written = 0;
  #total = 0;
  #waiters: Waiter[] = [];
  #closed = false;
  #closedResolve: () => void = () => {};
  /** Each chunk read (a copy the callee may keep). */
  onData: (chunk: Uint8Array) => void = () => {};
  /** Told once, when the stream ended (end of stream, an error, or {@link close}). */
  onClose: (reason: string) => void = () => {};
  /** Resolves when the stream ended. */
  readonly closed: Promise<void>;

  /** Takes `fd` (connected, non-blocking) and starts reading it. */
  constructor(fd: number) {
    this.#fd = fd;
    this.closed = new Promise((resolve) => this.#closedResolve = resolve);
    this.#client = {
      fd,
      interest: () => {
        const { POLLIN, POLLOUT } = libc().table.poll;
        return this.#closed ? 0 : POLLIN | (this.#queued > 0 ? POLLOUT : 0);
      },
      ready: (revents) => this.#ready(revents),
      fail: (error) => this.#finish(`failed: ${String(error)}`),
    };
    reactor().add(this.#client);
  }

  /** True once ended. */
  get isClosed(): boolean {
    return this.#closed;
  }

  /**
   * Queues `bytes` (not copied: left unchanged until this resolves); resolves once the kernel took all of
   * them. Rejects with `E_FD_PASSING` when the stream ends first, or at once when more than
   * {@link MAX_QUEUED_BYTES} would be waiting.
   */
  write(bytes: Uint8Array): Promise<void> {
    if (this.#closed) return Promise.reject(new SpawnError("E_FD_PASSING", "The connection is closed"));
    if (this.#queued + bytes.length > MAX_QUEUED_BYTES) {
      return Promise.reject(
        new SpawnError(
          "E_FD_PASSING",
          `The peer does not read: more than ${MAX_QUEUED_BYTES} bytes would wait for it`,
        ),
      );
    }
    if (bytes.length === 0) return Promise.resolve();
    this.#out.push(bytes);
    this.#queued += bytes.length;
    this.#total += bytes.length;
    const done = new Promise<void>((resolve, reject) => {
      this.#waiters.push({ upTo: this.#total, resolve, reject });
    });
    this.#flush();
    return done;
  }

  /** Ends the stream: the descriptor is closed, unwritten bytes are dropped. */
  close(): void {
    this.#finish("closed");
  }

  #ready(revents: number): void {
    const { POLLIN, POLLOUT, POLLHUP, POLLERR } = libc().table.poll;
    if ((revents & POLLOUT) !== 0) this.#flush();
    if (this.#closed || (revents & (POLLIN | POLLHUP | POLLERR)) === 0) return;
    const lib = libc();
    // A bounded number of reads per turn: one busy stream must not starve the others on the reactor.
    for (let rounds = 0; rounds < 16 && !this.#closed; rounds++) {
      const n = Number(lib.sym.read(this.#fd, this.#buffer, BigInt(this.#buffer.length)));
      if (n > 0) {
        this.onData(this.#buffer.slice(0, n));
        continue;
      }
      if (n < 0 && lib.errno() === lib.table.errno.EAGAIN) return;
      if (n < 0 && lib.errno() === lib.table.errno.EINTR) continue;
      this.#finish(n === 0 ? "end of stream" : `read failed with errno ${lib.errno()}`);
      return;
    }
  }

  #flush(): void {
    const lib = libc();
    while (this.#out.length > 0 && !this.#closed) {
      const head = this.#out[0]!;
      const n = Number(lib.sym.write(this.#fd, head, BigInt(head.length)));
      if (n > 0) {
        this.#queued -= n;
        this.#written += n;
        if (n === head.length) this.#out.shift();
        else this.#out[0] = head.subarray(n);
        continue;
      }
      const errno = lib.errno();
      if (errno === lib.table.errno.EINTR) continue;
      if (errno !== lib.table.errno.EAGAIN) this.#finish(`write failed with errno ${errno}`);
      break;
    }
    while (this.#waiters.length > 0 && this.#waiters[0]!.upTo <= this.#written) {
      this.#waiters.shift()!.resolve();
    }
    reactor().wake(); // POLLOUT interest may have changed.
  }

  #finish(reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#out = [];
    this.#queued = 0;
    reactor().remove(this.#client);
    closeQuietly(this.#fd);
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) {
      waiter.reject(new SpawnError("E_FD_PASSING", `The connection ended before this was sent (${reason})`));
    }
    this.#closedResolve();
    this.onClose(reason);
  }
}
