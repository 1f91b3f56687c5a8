/**
 * The keeper's connection to its daemon: one at a time (a new one replaces the old: only the daemon holding
 * the state directory's lock connects), checked by the kernel's word on who connected. Requests are read
 * and decoded here (a malformed one is refused); events go out in order through an outbox that waits for
 * room on the socket, and a daemon that lets {@link OUTBOX_CAP} bytes pile up is dropped.
 *
 * @module
 */
import {
  acceptUnix,
  closeQuietly,
  libc,
  peerCredentials,
  type PollClient,
  reactor,
  receiveFds,
  sendFds,
} from "../pty/mod.ts";
import type { KeeperEvent, KeeperRequest } from "../protocol/mod.ts";
import { SpecterError, toSpecterError } from "../errors.ts";
import { decodeKeeperRequest } from "./messages.ts";

/** Largest message the keeper takes (a spawn's argv and environment). */
export const MAX_KEEPER_MESSAGE = 192 * 1024;
/**
 * Most descriptors one message to the keeper carries: a spawn passes every bind of its launch plan (the
 * `agent` preset binds about 50 paths), its data files and the seccomp filter. The kernel allows 253; the
 * daemon refuses a launch with more before sending (a message cut short drops the daemon, and with it every
 * session).
 */
export const MAX_SPAWN_FDS = 200;

/** Bytes of messages the daemon may leave unread before it is dropped (a hello for a thousand sessions is ~200 KiB). */
const OUTBOX_CAP = 16 * 1024 * 1024;

const encoder = new TextEncoder();

/** A message waiting for room on the daemon's socket, with the descriptors closed once it is sent. */
interface Outgoing {
  readonly op: string;
  /** The session whose terminal it hands over (its master is in `fds` without being owned). */
  readonly session: string | null;
  readonly payload: Uint8Array;
  readonly fds: readonly number[];
  readonly owned: readonly number[];
}

/** What the keeper does with its daemon's connection. */
export interface DaemonLinkHandlers {
  /** A daemon connected: it is told what is kept (the link sends it). */
  connected(): void;
  /** A request, with the descriptors it carried (closed by the link once this returns or throws). */
  request(request: KeeperRequest, fds: readonly number[]): void;
  /** The daemon was dropped (its outbox is cleared already). */
  dropped(): void;
  /** A notable event for the keeper's log. */
  log(text: string): void;
}

/** The connection to the current daemon (none at first). */
export class DaemonLink {
  readonly #listener: number;
  readonly #handlers: DaemonLinkHandlers;
  #daemon = -1;
  #daemonClient: PollClient | null = null;
  /** Reused for every message: garbage per call would grow the keeper's heap. */
  #message = new Uint8Array(MAX_KEEPER_MESSAGE);
  #outbox: Outgoing[] = [];
  #outboxBytes = 0;

  /** Serves daemons that connect on `listener` (the caller's reactor client calls {@link accept}). */
  constructor(listener: number, handlers: DaemonLinkHandlers) {
    this.#listener = listener;
    this.#handlers = handlers;
  }

  /** True while a daemon is connected. */
  get connected(): boolean {
    return this.#daemon >= 0;
  }

  /** Takes every connection waiting on the listener. */
  accept(): void {
    for (;;) {
      const fd = acceptUnix(this.#listener);
      if (fd === null) return;
      // The directory is private; the kernel's word on who connected is checked too.
      let uid = -1;
      try {
        uid = peerCredentials(fd).uid;
      } catch {
        // No credentials: refused below.
      }
      if (uid !== Deno.uid()) {
        closeQuietly(fd);
        continue;
      }
      // The old daemon is gone: a new one holds the lock.
      if (this.#daemon >= 0) this.drop("a new daemon connected");
      this.#daemon = fd;
      const client: PollClient = {
        fd,
        interest: () => {
          const { POLLIN, POLLOUT } = libc().table.poll;
          return POLLIN | (this.#outbox.length > 0 ? POLLOUT : 0);
        },
        ready: (revents) => {
          if ((revents & libc().table.poll.POLLOUT) !== 0) this.#flushOutbox();
          if (this.#daemon >= 0) this.#receive();
        },
        fail: (error) => this.drop(`its connection failed (${String(error)})`),
      };
      this.#daemonClient = client;
      reactor().add(client);
      this.#handlers.connected();
    }
  }

  /** Drops the daemon (its successor gets the state in its hello). */
  drop(reason: string): void {
    if (this.#daemon >= 0) this.#handlers.log(`the daemon is dropped: ${reason}`);
    if (this.#daemonClient !== null) reactor().remove(this.#daemonClient);
    closeQuietly(this.#daemon);
    this.#daemon = -1;
    this.#daemonClient = null;
    this.#clearOutbox();
    this.#handlers.dropped();
  }

  /**
   * Sends `event` with copies of `fds`, then closes the descriptors in `owned` (once sent or dropped).
   * Queued, in order, while the daemon's socket is full (a hello with a thousand `kept` messages fills it
   * long before the daemon has read them); a daemon that lets {@link OUTBOX_CAP} bytes pile up is dropped.
   */
  send(event: KeeperEvent, fds: readonly number[] = [], owned: readonly number[] = []): void {
    if (this.#daemon < 0) {
      for (const fd of owned) closeQuietly(fd);
      return;
    }
    const payload = encoder.encode(JSON.stringify(event));
    const session = fds.length > 0 && "id" in event && typeof event.id === "string" ? event.id : null;
    this.#outbox.push({ op: event.op, session, payload, fds, owned });
    this.#outboxBytes += payload.length;
    this.#flushOutbox();
    if (this.#outboxBytes > OUTBOX_CAP) this.drop(`it read nothing of ${this.#outboxBytes} bytes`);
  }

  /**
   * Drops the hand-overs of session `id` still waiting to be sent: they name its master, which is about
   * to be closed (its number could then be another descriptor's by the time the message goes).
   */
  dropQueued(id: string): void {
    const kept: Outgoing[] = [];
    for (const message of this.#outbox) {
      if (message.session !== id) {
        kept.push(message);
        continue;
      }
      this.#outboxBytes -= message.payload.length;
      for (const fd of message.owned) closeQuietly(fd);
    }
    this.#outbox = kept;
  }

  #flushOutbox(): void {
    while (this.#outbox.length > 0 && this.#daemon >= 0) {
      const message = this.#outbox[0]!;
      try {
        sendFds(this.#daemon, message.fds, message.payload);
      } catch (error: unknown) {
        const errno = error instanceof SpecterError ? error.details.errno : undefined;
        if (errno === libc().table.errno.EAGAIN) {
          reactor().wake(); // Now waiting for POLLOUT (see the daemon's client).
          return;
        }
        // The daemon is gone; the next one gets the state in its hello.
        this.drop(`sending "${message.op}" failed (${String(error)})`);
        return;
      }
      this.#outbox.shift();
      this.#outboxBytes -= message.payload.length;
      for (const fd of message.owned) closeQuietly(fd);
    }
  }

  #clearOutbox(): void {
    for (const message of this.#outbox) for (const fd of message.owned) closeQuietly(fd);
    this.#outbox = [];
    this.#outboxBytes = 0;
  }

  #receive(): void {
    for (;;) {
      let message;
      try {
        message = receiveFds(this.#daemon, { buffer: this.#message, dontWait: true, maxFds: MAX_SPAWN_FDS });
      } catch (error: unknown) {
        this.drop(`receiving failed (${String(error)})`);
        return;
      }
      if (message === "again") return;
      if (message === null) {
        this.drop("it closed its connection");
        return;
      }
      const decoded = decodeKeeperRequest(message.payload);
      if ("refusal" in decoded) {
        for (const fd of message.fds) closeQuietly(fd);
        this.#handlers.log("a malformed message was refused");
        this.send(decoded.refusal);
        continue;
      }
      const request = decoded.request;
      try {
        this.#handlers.request(request, message.fds);
      } catch (error: unknown) {
        const specter = toSpecterError(error);
        this.#handlers.log(`request "${request.op}" failed: ${specter.message}`);
        this.send({ op: "error", id: "id" in request ? request.id : undefined, ...specter.toJSON() });
      } finally {
        for (const fd of message.fds) closeQuietly(fd);
      }
    }
  }
}
