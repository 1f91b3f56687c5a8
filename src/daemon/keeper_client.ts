/**
 * The daemon's side of the keeper: connects (starting the keeper when none runs), asks it to spawn or hand
 * back a session's terminal, acknowledges logged output, and turns its exit records into the wait
 * statuses a session expects from its own children.
 *
 * Spawns are a synchronous round trip (as `posix_spawn` is for a session spawned in-process): the keeper
 * answers within milliseconds, or within {@link KEEPER_TIMEOUT_MS} the daemon gives up with `E_KEEPER`.
 *
 * @module
 */
import { DaemonError, SpawnError, SpecterError, UsageError } from "../errors.ts";
import {
  closeQuietly,
  decodeWaitStatus,
  type ExitWatcher,
  libc,
  type PollClient,
  reactor,
  receiveFds,
  sendFds,
  type SpawnedChild,
  type SpawnRequest,
  type StatusListener,
} from "../pty/mod.ts";
import type { KeeperEvent, KeeperRequest, KeptSessionSchema } from "../protocol/mod.ts";
import type { z } from "zod";
import { keeperPaths, MAX_KEEPER_MESSAGE, MAX_SPAWN_FDS } from "../keeper/mod.ts";
import { decodeKeeperEvent, keeperFailure } from "./keeper_events.ts";
import { connectOwnSocket } from "./trust.ts";

/** How long the daemon waits for the keeper's answer (or for a started keeper to listen). */
export const KEEPER_TIMEOUT_MS = 5000;

/** What the keeper holds of one session when the daemon connects. */
export type KeptSession = z.infer<typeof KeptSessionSchema>;

/** A terminal handed over by the keeper. */
export interface HandedOver {
  readonly pid: number;
  /** The terminal's master (resizes). */
  readonly master: number;
  /** The daemon's end of the relay: output is read and input written here. */
  readonly io: number;
  readonly ttyPath: string;
}

const encoder = new TextEncoder();
/** Linux errnos that mean the keeper's end of the socket is gone. */
const EPIPE = 32;
const ECONNRESET = 104;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The connection to a state directory's keeper. */
export class KeeperClient implements ExitWatcher {
  /** The sessions the keeper held when the daemon connected. */
  readonly kept: readonly KeptSession[];
  /** The keeper's pid. */
  readonly keeperPid: number;
  readonly #fd: number;
  readonly #client: PollClient;
  readonly #listeners = new Map<number, StatusListener>();
  readonly #statuses = new Map<number, number>();
  #closed = false;
  /** Releases (and ends of input) waiting for room on the keeper's socket, in order. */
  #queued: KeeperRequest[] = [];
  readonly #buffer = new Uint8Array(MAX_KEEPER_MESSAGE);
  /** Told when the keeper went away (every watched program is then reported killed). */
  onClosed: () => void = () => {};
  /** Told when the keeper refused a message nobody waits on (a `close_input`) for session `id`. */
  onRefused: (id: string, error: SpecterError) => void = () => {};

  private constructor(fd: number, hello: Hello) {
    this.#fd = fd;
    this.kept = hello.sessions;
    this.keeperPid = hello.pid;
    for (const session of hello.sessions) {
      if (session.status !== null) this.#statuses.set(session.pid, session.status);
    }
    this.#client = {
      fd,
      interest: () => libc().table.poll.POLLIN,
      ready: () => this.#drain(),
      fail: () => this.#lost(),
    };
    reactor().add(this.#client);
  }

  /**
   * Connects to the keeper of `stateDir`, starting one with `start` when none listens. Throws `E_KEEPER`
   * when none comes up or it does not say hello, `E_DAEMON_UNTRUSTED` when its socket or the process
   * listening on it is not this user's.
   */
  static async connect(stateDir: string, start: () => void): Promise<KeeperClient> {
    const { socket } = keeperPaths(stateDir);
    let started = false;
    const deadline = Date.now() + KEEPER_TIMEOUT_MS;
    for (;;) {
      // Only a keeper of this user's, in a private state directory (E_DAEMON_UNTRUSTED otherwise): the
      // daemon hands it every session's argv and environment.
      const fd = connectOwnSocket(socket, "seqpacket", { what: "keeper's socket", place: "state" });
      if (fd !== null) {
        const hello = await helloFrom(fd, deadline);
        if (hello !== null) return new KeeperClient(fd, hello);
        closeQuietly(fd); // A keeper on its way out (it had nothing left): start another.
      }
      if (!started) {
        started = true;
        start();
      }
      if (Date.now() > deadline) {
        throw new DaemonError("E_KEEPER", `No keeper came up on "${socket}"`, { details: { socket } });
      }
      await sleep(20);
    }
  }

  /** Spawns `request` in the keeper as session `id` (the {@link SpawnRequest} of a launch). */
  spawn(id: string, request: SpawnRequest): SpawnedChild {
    const fds = (request.inheritFds ?? []).map((entry) => entry.fd);
    if (fds.length > MAX_SPAWN_FDS) {
      // Refused here: the keeper drops a daemon whose message it must cut short.
      throw new SpawnError(
        "E_FD_PASSING",
        `A launch passes ${fds.length} descriptors; the keeper takes at most ${MAX_SPAWN_FDS}`,
        { details: { fds: fds.length, max: MAX_SPAWN_FDS } },
      );
    }
    const handed = this.#roundTrip(
      {
        op: "spawn",
        id,
        argv: [...request.argv],
        ...(request.argv0 === undefined ? {} : { argv0: request.argv0 }),
        env: { ...request.env },
        ...(request.cwd === undefined ? {} : { cwd: request.cwd }),
        cols: request.cols,
        rows: request.rows,
        tty: request.tty !== false,
        ...(request.controllingTerminal === false ? { ctty: false } : {}),
        targets: (request.inheritFds ?? []).map((entry) => entry.target),
      },
      fds,
      "spawned",
    );
    return { pid: handed.pid, master: handed.master, ttyPath: handed.ttyPath, io: handed.io };
  }

  /** Takes back session `id`'s terminal, its output resent from offset `from`. */
  resume(id: string, from: number): HandedOver {
    return this.#roundTrip({ op: "resume", id, from }, [], "resumed");
  }

  /** Tells the keeper that output up to `offset` is in the frame log (it stops holding it). */
  ack(id: string, offset: number): void {
    this.#postQuietly({ op: "ack", id, offset });
  }

  /**
   * Ends session `id`'s input (`tty: false`) after the first `after` bytes written on its relay: the keeper
   * writes those to the program, then shuts down its socket's writing side. A refusal comes to
   * {@link onRefused}.
   */
  closeInput(id: string, after: number): void {
    this.#postQuietly({ op: "close_input", id, after });
  }

  /** The session is over: the keeper closes its terminal and forgets it. */
  release(id: string): void {
    this.#postQuietly({ op: "release", id });
  }

  /**
   * A message nobody waits on. A `release` or `close_input` that finds the keeper's socket full waits for
   * the next {@link flushQueued} (else the keeper would hold an ended session's terminal for good, or a
   * program would wait for the end of its input forever); an `ack` is dropped then (the next one covers
   * it). A lost keeper was handled by #post.
   */
  #postQuietly(request: KeeperRequest): void {
    this.flushQueued();
    const kept = request.op === "release" || request.op === "close_input";
    if (this.#queued.length > 0 && kept) {
      this.#queued.push(request);
      return;
    }
    try {
      this.#post(request);
    } catch (error: unknown) {
      const errno = error instanceof SpecterError ? error.details.errno : undefined;
      if (errno === libc().table.errno.EAGAIN && kept) this.#queued.push(request);
    }
  }

  /** Sends the releases that found the keeper's socket full (the daemon calls it on its ack timer). */
  flushQueued(): void {
    while (this.#queued.length > 0 && !this.#closed) {
      try {
        this.#post(this.#queued[0]!);
      } catch {
        return; // Still full (or the keeper is gone, which #post handled): the next call tries again.
      }
      this.#queued.shift();
    }
  }

  /** The raw wait status the keeper recorded for `pid`, if it ended. */
  statusOf(pid: number): number | null {
    return this.#statuses.get(pid) ?? null;
  }

  watch(pid: number, listener: StatusListener): void {
    this.#listeners.set(pid, listener);
    queueMicrotask(() => this.look(pid));
  }

  look(pid: number): boolean {
    const listener = this.#listeners.get(pid);
    if (listener === undefined) return false;
    const status = this.#statuses.get(pid);
    if (status === undefined) {
      if (!this.#closed) return false;
      this.#listeners.delete(pid);
      // The keeper died: its sandboxes died with it (--die-with-parent); report the program killed.
      listener({ kind: "signaled", signal: libc().table.signals.KILL }, performance.now());
      return true;
    }
    this.#listeners.delete(pid);
    this.#statuses.delete(pid); // Reported once: the pid may be reused.
    listener(decodeWaitStatus(status, libc().table), performance.now());
    return true;
  }

  /** Disconnects (the keeper keeps every session for the next daemon). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    reactor().remove(this.#client);
    closeQuietly(this.#fd);
  }

  get closed(): boolean {
    return this.#closed;
  }

  #post(request: KeeperRequest, fds: readonly number[] = []): void {
    if (this.#closed) return;
    const payload = encoder.encode(JSON.stringify(request));
    if (payload.length > MAX_KEEPER_MESSAGE) {
      // The caller's input (a huge argv or environment), not a failing keeper: every session goes on.
      throw new UsageError(
        `The program's arguments and environment take ${payload.length} bytes; at most ${MAX_KEEPER_MESSAGE} are taken`,
      );
    }
    try {
      sendFds(this.#fd, fds, payload);
    } catch (error: unknown) {
      // Only a peer that is gone means the keeper is lost; anything else fails this request alone.
      const errno = error instanceof SpecterError ? error.details.errno : undefined;
      if (errno === EPIPE || errno === ECONNRESET) {
        this.#lost();
        throw new DaemonError("E_KEEPER", "The keeper is gone", { cause: error });
      }
      throw error;
    }
  }

  #roundTrip(request: KeeperRequest, fds: readonly number[], op: "spawned" | "resumed"): HandedOver {
    if (this.#closed) throw new DaemonError("E_KEEPER", "The keeper is gone");
    // A queued release goes first: a spawn of the same name must not overtake it.
    this.flushQueued();
    if (this.#queued.length > 0) {
      throw new DaemonError("E_KEEPER", "The keeper has not taken the messages sent before: try again");
    }
    const id = "id" in request ? request.id : "";
    this.#post(request, fds);
    const deadline = performance.now() + KEEPER_TIMEOUT_MS;
    const lib = libc();
    const pollfd = new Int32Array(2);
    for (;;) {
      const message = this.#receiveOne();
      if (message === null) {
        this.#lost();
        throw new DaemonError("E_KEEPER", "The keeper went away during a request");
      }
      if (message !== "again") {
        const { event, received } = message;
        if (event.op === "error" && event.id === id) {
          for (const fd of received) closeQuietly(fd);
          throw keeperFailure(event);
        }
        if ((event.op === "spawned" || event.op === "resumed") && event.op === op && event.id === id) {
          const [master, io] = received;
          if (master === undefined || io === undefined) {
            for (const fd of received) closeQuietly(fd);
            throw new DaemonError("E_KEEPER", "The keeper handed over no terminal");
          }
          return { pid: event.pid, master, io, ttyPath: event.tty_path };
        }
        this.#dispatch(event, received);
        continue;
      }
      const left = deadline - performance.now();
      if (left <= 0) {
        throw new DaemonError("E_KEEPER", `The keeper did not answer within ${KEEPER_TIMEOUT_MS} ms`);
      }
      pollfd[0] = this.#fd;
      new Int16Array(pollfd.buffer)[2] = lib.table.poll.POLLIN;
      lib.sym.poll_now(new Uint8Array(pollfd.buffer), 1n, Math.ceil(left));
    }
  }

  #receiveOne(): { event: KeeperEvent; received: number[] } | null | "again" {
    let message;
    try {
      message = receiveFds(this.#fd, { buffer: this.#buffer, dontWait: true, maxFds: 8 });
    } catch {
      return null;
    }
    if (message === "again" || message === null) return message;
    const event = decodeKeeperEvent(message.payload);
    if (event === null) {
      for (const fd of message.fds) closeQuietly(fd);
      return "again";
    }
    return { event, received: message.fds };
  }

  #drain(): void {
    for (;;) {
      const message = this.#receiveOne();
      if (message === "again") return;
      if (message === null) {
        this.#lost();
        return;
      }
      this.#dispatch(message.event, message.received);
    }
  }

  #dispatch(event: KeeperEvent, received: readonly number[]): void {
    for (const fd of received) closeQuietly(fd); // Only answers to a request carry descriptors.
    if (event.op === "error" && event.id !== undefined) this.onRefused(event.id, keeperFailure(event));
    if (event.op !== "exited") return;
    this.#statuses.set(event.pid, event.status);
    queueMicrotask(() => this.look(event.pid));
  }

  #lost(): void {
    if (this.#closed) return;
    this.close();
    for (const pid of [...this.#listeners.keys()]) this.look(pid);
    this.onClosed();
  }
}

interface Hello {
  readonly pid: number;
  readonly sessions: KeptSession[];
}

/** Reads the keeper's `kept` messages and its hello on a fresh connection (null when it closed at once). */
async function helloFrom(fd: number, deadline: number): Promise<Hello | null> {
  const sessions: KeptSession[] = [];
  for (;;) {
    let message;
    try {
      message = receiveFds(fd, { maxPayload: MAX_KEEPER_MESSAGE, dontWait: true, maxFds: 8 });
    } catch {
      return null;
    }
    if (message === null) return null;
    if (message !== "again") {
      for (const received of message.fds) closeQuietly(received);
      const event = decodeKeeperEvent(message.payload);
      if (event === null) return null;
      if (event.op === "kept") {
        sessions.push(event.session);
        continue;
      }
      if (event.op !== "hello" || event.count !== sessions.length) return null;
      return { pid: event.pid, sessions };
    }
    if (Date.now() > deadline) return null;
    await sleep(5);
  }
}
