/**
 * The one poll reactor that serves every session in the process.
 *
 * Clients read synchronously until `EAGAIN`; then a single `poll()` over every master fd plus a
 * wake-up pipe runs on Deno's blocking-thread pool. There is never more than one pending off-thread call
 * for the whole process: one per session would exhaust the 32-thread pool and hang the runtime at ~16
 * sessions (see shared/research/pty-baselines.md).
 *
 * @module
 */
import { libc } from "./_libc.ts";
import { openWakePipe } from "./pty.ts";

/** Something with an fd the reactor polls. */
export interface PollClient {
  /** The fd to poll. */
  readonly fd: number;
  /** The `poll()` events wanted right now (`POLLIN`/`POLLOUT` bits); 0 skips the fd this round. */
  interest(): number;
  /** Called on the JS thread with the `revents` of the fd. */
  ready(revents: number): void;
  /** Called when `ready` threw; the client has been removed. */
  fail(error: unknown): void;
}

/** Pause after a failed poll() (e.g. ENOMEM) so that a persistent failure cannot spin a core. */
const POLL_RETRY_MS = 10;

/** Multiplexes many {@link PollClient}s over one off-thread `poll()`. */
export class Reactor {
  #clients = new Set<PollClient>();
  #wakeRead = -1;
  #wakeWrite = -1;
  #running = false;
  #polling = false;
  #wakePending = false;
  #fds = new Int32Array(0);
  #scratch = new Uint8Array(64);

  /** Number of registered clients. */
  get size(): number {
    return this.#clients.size;
  }

  /** Registers `client` and starts the loop if it is not running. */
  add(client: PollClient): void {
    this.#clients.add(client);
    if (this.#running) this.wake();
    else void this.#run();
  }

  /** Unregisters `client`; the loop stops by itself once no clients remain. */
  remove(client: PollClient): void {
    if (this.#clients.delete(client)) this.wake();
  }

  /** Makes a pending `poll()` return so that changed interests take effect. */
  wake(): void {
    if (!this.#polling || this.#wakePending) return;
    this.#wakePending = true;
    this.#scratch[0] = 1;
    libc().sym.write(this.#wakeWrite, this.#scratch, 1n);
  }

  #openWakePipe(): void {
    if (this.#wakeRead >= 0) return;
    [this.#wakeRead, this.#wakeWrite] = openWakePipe();
  }

  #drainWakePipe(): void {
    const { sym } = libc();
    while (Number(sym.read(this.#wakeRead, this.#scratch, 64n)) > 0) {
      // Drained bytes carry no meaning: one wake-up is as good as many.
    }
    this.#wakePending = false;
  }

  async #run(): Promise<void> {
    this.#running = true;
    this.#openWakePipe();
    const lib = libc();
    const { POLLIN } = lib.table.poll;
    try {
      while (this.#clients.size > 0) {
        const clients = [...this.#clients];
        const count = clients.length + 1;
        if (this.#fds.length < count * 2) this.#fds = new Int32Array(count * 4);
        const fds = this.#fds;
        const events = new Int16Array(fds.buffer);
        fds[0] = this.#wakeRead;
        events[2] = POLLIN;
        events[3] = 0;
        clients.forEach((client, i) => {
          const interest = client.interest();
          // A negative fd makes poll() skip the entry (a paused or finished session).
          fds[(i + 1) * 2] = interest === 0 ? -1 : client.fd;
          events[(i + 1) * 4 + 2] = interest;
          events[(i + 1) * 4 + 3] = 0;
        });
        this.#polling = true;
        const result = await lib.sym.poll(new Uint8Array(fds.buffer, 0, count * 8), BigInt(count), -1);
        this.#polling = false;
        if (result < 0) {
          // EINTR, or a resource failure; errno is the worker thread's, so back off and rebuild.
          await new Promise((resolve) => setTimeout(resolve, POLL_RETRY_MS));
          continue;
        }
        if (events[3] !== 0) this.#drainWakePipe();
        clients.forEach((client, i) => {
          const revents = events[(i + 1) * 4 + 3]!;
          if (revents === 0 || !this.#clients.has(client)) return;
          try {
            client.ready(revents);
          } catch (error: unknown) {
            // One broken session must not take the reactor (and every other session) down with it.
            this.#clients.delete(client);
            client.fail(error);
          }
        });
      }
    } finally {
      this.#running = false;
      this.#polling = false;
    }
  }
}

let shared: Reactor | undefined;

/** The process-wide reactor. */
export function reactor(): Reactor {
  return shared ??= new Reactor();
}
