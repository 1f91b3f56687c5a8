/**
 * One client of the daemon: a unix stream socket carrying JSON-RPC 2.0 over NDJSON, read and written
 * without blocking on the process's poll reactor. Bounded both ways: a request line over
 * {@link MAX_LINE_BYTES} is refused (and skipped), and a client whose unsent output passes
 * {@link MAX_UNSENT_BYTES} (it never reads) is dropped, so no client can grow the daemon's memory.
 *
 * @module
 */
import { DriverLineSplitter } from "../frames/mod.ts";
import { closeQuietly, libc, type PollClient, reactor, shutdownWrite } from "../pty/mod.ts";
import { type Access, LOCAL_ACCESS, type Peer, type PeerHost } from "../remote/mod.ts";

/** Longest request line (bytes). */
export const MAX_LINE_BYTES = 1024 * 1024;
/** How long a refused client may go on sending before its connection is closed. */
const LINGER_MS = 2000;
/**
 * Bytes of responses and frames waiting for a client, beyond which a client that has taken nothing for
 * {@link STALL_MS} is dropped (it does not read).
 */
export const MAX_UNSENT_BYTES = 16 * 1024 * 1024;
/** Beyond this, a client is dropped however it reads: the daemon's memory stays bounded. */
export const HARD_UNSENT_BYTES = 64 * 1024 * 1024;
/** How long a client over {@link MAX_UNSENT_BYTES} may take nothing before it is dropped. */
export const STALL_MS = 5000;
const READ_CHUNK = 64 * 1024;
const encoder = new TextEncoder();
/** One read buffer for every connection (lines are copied out by the splitter). */
const readBuffer = new Uint8Array(READ_CHUNK);

/** A client connection on the unix socket. */
export class Connection implements Peer {
  /** The peer's pid, as the kernel recorded it at connect time. */
  readonly peerPid: number;
  readonly name: string;
  readonly access: Access = LOCAL_ACCESS;
  readonly touched = new Set<string>();
  readonly #fd: number;
  readonly #host: PeerHost;
  readonly #splitter = new DriverLineSplitter(MAX_LINE_BYTES);
  readonly #client: PollClient;
  #out: Uint8Array[] = [];
  #outBytes = 0;
  #closed = false;
  #closing = false;
  #shut = false;
  /** When the client last took bytes (or nothing was waiting for it). */
  #progressAt = performance.now();
  /** Set by the daemon: the protocol version was agreed (`daemon.hello`). */
  greeted = false;
  /** Set by the daemon once the connection speaks the agent tools (`agent.open`): where its lines go. */
  agentInput: ReadableStreamDefaultController<Uint8Array> | null = null;

  constructor(fd: number, peerPid: number, host: PeerHost) {
    this.#fd = fd;
    this.peerPid = peerPid;
    this.name = `pid ${peerPid}`;
    this.#host = host;
    this.#client = {
      fd,
      interest: () => {
        const { POLLIN, POLLOUT } = libc().table.poll;
        if (this.#closed) return 0;
        return POLLIN | (this.#outBytes > 0 ? POLLOUT : 0);
      },
      ready: (revents) => this.#ready(revents),
      fail: (error) => this.#finish(`failed: ${String(error)}`),
    };
    reactor().add(this.#client);
  }

  /** True once closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Bytes queued for the client. */
  get unsent(): number {
    return this.#outBytes;
  }

  /** Messages on the unix socket are never compressed. */
  compress(_on: boolean): void {}

  /** Queues one JSON message (a line). Drops the client when it has not read {@link MAX_UNSENT_BYTES}. */
  send(message: unknown): void {
    this.sendBytes(encoder.encode(JSON.stringify(message) + "\n"));
  }

  /** Drops the client when it has more than {@link MAX_UNSENT_BYTES} waiting and took nothing for {@link STALL_MS}. */
  checkStall(): void {
    if (
      !this.#closed && this.#outBytes > MAX_UNSENT_BYTES && performance.now() - this.#progressAt > STALL_MS
    ) {
      this.#finish("dropped: it does not read what it is sent");
    }
  }

  /** Queues bytes as they are (whole lines). Drops the client as {@link send} does. */
  sendBytes(bytes: Uint8Array): void {
    if (this.#closed) return;
    const unsent = this.#outBytes + bytes.length;
    // A slow reader catching up is kept (up to the hard bound); one that takes nothing is dropped. Either
    // can attach again from the last seq it saw: the log has everything.
    if (
      unsent > HARD_UNSENT_BYTES ||
      (unsent > MAX_UNSENT_BYTES && performance.now() - this.#progressAt > STALL_MS)
    ) {
      this.#finish("dropped: it does not read what it is sent");
      return;
    }
    if (this.#outBytes === 0) this.#progressAt = performance.now(); // Nothing was waiting: not stalled.
    this.#out.push(bytes);
    this.#outBytes += bytes.length;
    this.#flush();
  }

  /**
   * Sends what is queued, then ends the connection: a refused client still reads why. Its writing side is
   * shut down and what the client still sends is read and dropped until it closes (or for
   * {@link LINGER_MS}): closing with its bytes unread would reset the connection, and the client would
   * lose the answer.
   */
  closeAfterSending(): void {
    if (this.#closing) return;
    this.#closing = true;
    this.#host.closed(this, "refused");
    this.#flush();
  }

  /** Closes at once. */
  close(reason = "closed by the daemon"): void {
    this.#finish(reason);
  }

  #ready(revents: number): void {
    const { POLLIN, POLLOUT, POLLHUP, POLLERR } = libc().table.poll;
    if ((revents & POLLOUT) !== 0) this.#flush();
    if (this.#closed) return;
    if ((revents & (POLLIN | POLLHUP | POLLERR)) === 0) return;
    const lib = libc();
    const buffer = readBuffer;
    for (let rounds = 0; rounds < 16 && !this.#closed; rounds++) {
      const n = Number(lib.sym.read(this.#fd, buffer, BigInt(buffer.length)));
      if (n > 0) {
        if (this.#closing) continue; // Refused: what it still sends is dropped.
        for (const result of this.#splitter.push(buffer.subarray(0, n))) {
          this.#host.line(this, "line" in result ? result.line : result.error);
          if (this.#closed || this.#closing) break;
        }
        continue;
      }
      if (n < 0 && lib.errno() === lib.table.errno.EAGAIN) return;
      if (n < 0 && lib.errno() === lib.table.errno.EINTR) continue;
      this.#finish(n === 0 ? "disconnected" : `read failed with errno ${lib.errno()}`);
      return;
    }
  }

  #flush(): void {
    const lib = libc();
    while (this.#out.length > 0 && !this.#closed) {
      const head = this.#out[0]!;
      const n = Number(lib.sym.write(this.#fd, head, BigInt(head.length)));
      if (n > 0) this.#progressAt = performance.now();
      if (n === head.length) {
        this.#out.shift();
        this.#outBytes -= n;
        continue;
      }
      if (n > 0) {
        this.#out[0] = head.subarray(n);
        this.#outBytes -= n;
        continue;
      }
      const errno = lib.errno();
      if (errno === lib.table.errno.EINTR) continue;
      if (errno !== lib.table.errno.EAGAIN) this.#finish(`write failed with errno ${errno}`);
      break;
    }
    if (this.#closing && this.#outBytes === 0 && !this.#shut) {
      this.#shut = true;
      shutdownWrite(this.#fd);
      setTimeout(() => this.#finish("refused"), LINGER_MS);
    }
    reactor().wake(); // POLLOUT interest changed.
  }

  #finish(reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#out = [];
    this.#outBytes = 0;
    reactor().remove(this.#client);
    closeQuietly(this.#fd);
    if (!this.#closing) this.#host.closed(this, reason); // A refused one was told at refusal.
  }
}
