/**
 * The keeper (`specter keeper`): the one small process per user and state directory that spawns every
 * daemon session, holds its terminal, and outlives the daemon. It parses no output and knows no policy.
 *
 * - It **spawns** what the daemon asks (argv, env, size and the descriptors the launch plan passes, all
 *   prepared by the daemon), so a sandbox's `--die-with-parent` binds to the keeper, not the daemon.
 * - It is a **child subreaper**: it reaps every session's processes and records their exit status, also
 *   while no daemon runs.
 * - It **relays** the terminal: what the program writes is read here, held until the daemon acknowledges
 *   it (the daemon acknowledges only what its frame log holds), and sent to the daemon on a per-session
 *   socket; the daemon's input comes back the same way. A daemon killed at any moment therefore loses no
 *   byte: the next one resumes from the offset its log ends at, and what was held is sent again from
 *   there. While no daemon runs, at most {@link HOLD_CAP} bytes are held per session; then the program
 *   blocks on its full terminal, as with any slow reader.
 * - It **hands over** terminals over a unix `SOCK_SEQPACKET` socket with `SCM_RIGHTS`: the master (for
 *   resizes) and the daemon's end of the relay.
 *
 * Messages are {@link KeeperRequest}/{@link KeeperEvent} JSON, one per packet. One daemon is connected at
 * a time; a new connection replaces the old (only the daemon holding the state directory's lock connects).
 *
 * @module
 */
import { join } from "node:path";
import {
  acceptUnix,
  closeQuietly,
  libc,
  listenUnix,
  peerCredentials,
  type PollClient,
  raiseOpenFileLimit,
  reactor,
  receiveFds,
  sendFds,
  setNonBlocking,
  shutdownWrite,
  spawnOnPty,
  tryLockFile,
  unixSocketPair,
} from "../pty/mod.ts";
import type { KeeperEvent, KeeperRequest } from "../protocol/mod.ts";
import { decodeKeeperRequest } from "./messages.ts";
import { InputEnd } from "./input_end.ts";
import { SpecterError, toSpecterError, UsageError } from "../errors.ts";
import { ServiceLog } from "../fsafe/mod.ts";

/** Output bytes held per session until the daemon acknowledges them; reading pauses beyond. */
export const HOLD_CAP = 4 * 1024 * 1024;
/** Largest message the keeper takes (a spawn's argv and environment). */
export const MAX_KEEPER_MESSAGE = 192 * 1024;
/**
 * Most descriptors one message to the keeper carries: a spawn passes every bind of its launch plan (the
 * `agent` preset binds about 50 paths), its data files and the seccomp filter. The kernel allows 253; the
 * daemon refuses a launch with more before sending (a message cut short drops the daemon, and with it every
 * session).
 */
export const MAX_SPAWN_FDS = 200;
const READ_CHUNK = 64 * 1024;
/** Held output is kept in chunks of up to this size (see `Keeper.#hold`). */
const MERGE_BYTES = 64 * 1024;

/** Bytes of messages the daemon may leave unread before it is dropped (a hello for a thousand sessions is ~200 KiB). */
const OUTBOX_CAP = 16 * 1024 * 1024;

/** A message waiting for room on the daemon's socket, with the descriptors closed once it is sent. */
interface Outgoing {
  readonly op: string;
  /** The session whose terminal it hands over (its master is in `fds` without being owned). */
  readonly session: string | null;
  readonly payload: Uint8Array;
  readonly fds: readonly number[];
  readonly owned: readonly number[];
}
/** Input bytes taken from the relay while the terminal has not taken the previous ones. */
const INPUT_CAP = 64 * 1024;
const PR_SET_CHILD_SUBREAPER = 36;

const encoder = new TextEncoder();

/** The keeper's files in a state directory. */
export function keeperPaths(stateDir: string): { socket: string; lock: string; log: string } {
  return {
    socket: join(stateDir, "keeper.sock"),
    lock: join(stateDir, "keeper.lock"),
    log: join(stateDir, "keeper.log"),
  };
}

interface Kept {
  readonly id: string;
  readonly pid: number;
  readonly master: number;
  /** Where output is read and input written: the master, or the program's socket without a terminal. */
  readonly io: number;
  readonly ttyPath: string;
  /** False when the program runs on a socket (its input can then be ended: `close_input`). */
  readonly tty: boolean;
  status: number | null;
  /** Output not yet acknowledged: chunks from offset `heldFrom`. */
  held: Uint8Array[];
  heldFrom: number;
  readTo: number;
  /** The relay to the current daemon (-1: none) and how far output was sent on it. */
  relay: number;
  sentTo: number;
  /** Input read from the relay, not yet written to the terminal. */
  input: Uint8Array | null;
  /** Where the input ends, once the daemon closed it. */
  readonly inputEnd: InputEnd;
  eof: boolean;
  relayClosed: boolean;
  clients: PollClient[];
}

/** Runs the keeper for `stateDir` until it has no session and no daemon. Returns false when one runs already. */
export function runKeeper(stateDir: string): Promise<boolean> {
  Deno.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const paths = keeperPaths(stateDir);
  const lock = tryLockFile(paths.lock);
  if (lock === null) return Promise.resolve(false);
  libc().sym.prctl?.(PR_SET_CHILD_SUBREAPER, 1n, 0n, 0n, 0n);
  raiseOpenFileLimit(); // Two descriptors per session (its master, its relay), a thousand sessions.
  try {
    Deno.removeSync(paths.socket); // Stale: whoever made it no longer holds the lock.
  } catch {
    // None there.
  }
  const log = ServiceLog.open(paths.log);
  log.write(`keeper started for "${stateDir}"`);
  const keeper = new Keeper(listenUnix(paths.socket, "seqpacket"), log);
  return keeper.done.then(() => {
    log.write("keeper done: no session and no daemon left");
    log.close();
    try {
      Deno.removeSync(paths.socket);
    } catch {
      // Already gone.
    }
    closeQuietly(lock);
    return true;
  });
}

class Keeper {
  readonly done: Promise<void>;
  readonly #listener: number;
  readonly #sessions = new Map<string, Kept>();
  #daemon = -1;
  #daemonClient: PollClient | null = null;
  #listenClient: PollClient;
  #resolve!: () => void;
  #status = new Int32Array(1);
  #buffer = new Uint8Array(READ_CHUNK);
  /** Reused for every message and every relay read: garbage per call would grow the keeper's heap. */
  #message = new Uint8Array(MAX_KEEPER_MESSAGE);
  #input = new Uint8Array(INPUT_CAP);

  readonly #serviceLog: ServiceLog;
  #outbox: Outgoing[] = [];
  #outboxBytes = 0;

  constructor(listener: number, log: ServiceLog) {
    this.#listener = listener;
    this.#serviceLog = log;
    this.done = new Promise((resolve) => this.#resolve = resolve);
    this.#listenClient = {
      fd: listener,
      interest: () => libc().table.poll.POLLIN,
      ready: () => this.#accept(),
      fail: (error) => this.#log(`listener failed: ${String(error)}`),
    };
    reactor().add(this.#listenClient);
    Deno.addSignalListener("SIGCHLD", this.#reap);
    const tick = setInterval(this.#reap, 1000); // SIGCHLD can coalesce; a slow tick catches the rest.
    void this.done.then(() => {
      clearInterval(tick);
      Deno.removeSignalListener("SIGCHLD", this.#reap);
    });
  }

  /** Notable events only (never output): `keeper.log` in the state directory, and stderr. */
  #log(text: string): void {
    this.#serviceLog.write(text);
    // stderr is /dev/null when started by a daemon; kept for a keeper run by hand.
    console.error(`specter keeper: ${text}`);
  }

  #accept(): void {
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
      if (this.#daemon >= 0) this.#dropDaemon("a new daemon connected");
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
        fail: (error) => this.#dropDaemon(`its connection failed (${String(error)})`),
      };
      this.#daemonClient = client;
      reactor().add(client);
      // One message per session (a packet has a size limit; a thousand sessions would not fit in one).
      for (const kept of this.#sessions.values()) {
        this.#send({
          op: "kept",
          session: {
            id: kept.id,
            pid: kept.pid,
            tty_path: kept.ttyPath,
            status: kept.status,
            held_from: kept.heldFrom,
            read_to: kept.readTo,
            tty: kept.tty,
            input_closed: kept.inputEnd.closed,
          },
        });
      }
      this.#send({ op: "hello", pid: Deno.pid, count: this.#sessions.size });
      this.#log(`a daemon connected; ${this.#sessions.size} session(s) kept`);
    }
  }

  #dropDaemon(reason: string): void {
    if (this.#daemon >= 0) this.#log(`the daemon is dropped: ${reason}`);
    if (this.#daemonClient !== null) reactor().remove(this.#daemonClient);
    closeQuietly(this.#daemon);
    this.#daemon = -1;
    this.#daemonClient = null;
    this.#clearOutbox();
    for (const kept of this.#sessions.values()) this.#closeRelay(kept);
    this.#maybeDone();
  }

  #maybeDone(): void {
    if (this.#daemon < 0 && this.#sessions.size === 0) {
      reactor().remove(this.#listenClient);
      closeQuietly(this.#listener);
      this.#resolve();
    }
  }

  /**
   * Sends `event` with copies of `fds`, then closes the descriptors in `owned` (once sent or dropped).
   * Queued, in order, while the daemon's socket is full (a hello with a thousand `kept` messages fills it
   * long before the daemon has read them); a daemon that lets {@link OUTBOX_CAP} bytes pile up is dropped.
   */
  #send(event: KeeperEvent, fds: readonly number[] = [], owned: readonly number[] = []): void {
    if (this.#daemon < 0) {
      for (const fd of owned) closeQuietly(fd);
      return;
    }
    const payload = encoder.encode(JSON.stringify(event));
    const session = fds.length > 0 && "id" in event && typeof event.id === "string" ? event.id : null;
    this.#outbox.push({ op: event.op, session, payload, fds, owned });
    this.#outboxBytes += payload.length;
    this.#flushOutbox();
    if (this.#outboxBytes > OUTBOX_CAP) this.#dropDaemon(`it read nothing of ${this.#outboxBytes} bytes`);
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
        this.#dropDaemon(`sending "${message.op}" failed (${String(error)})`);
        return;
      }
      this.#outbox.shift();
      this.#outboxBytes -= message.payload.length;
      for (const fd of message.owned) closeQuietly(fd);
    }
  }

  /**
   * Drops the hand-overs of session `id` still waiting to be sent: they name its master, which is about
   * to be closed (its number could then be another descriptor's by the time the message goes).
   */
  #dropQueued(id: string): void {
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
        this.#dropDaemon(`receiving failed (${String(error)})`);
        return;
      }
      if (message === "again") return;
      if (message === null) {
        this.#dropDaemon("it closed its connection");
        return;
      }
      const decoded = decodeKeeperRequest(message.payload);
      if ("refusal" in decoded) {
        for (const fd of message.fds) closeQuietly(fd);
        this.#log("a malformed message was refused");
        this.#send(decoded.refusal);
        continue;
      }
      const request = decoded.request;
      try {
        this.#handle(request, message.fds);
      } catch (error: unknown) {
        const specter = toSpecterError(error);
        this.#log(`request "${request.op}" failed: ${specter.message}`);
        this.#send({ op: "error", id: "id" in request ? request.id : undefined, ...specter.toJSON() });
      } finally {
        for (const fd of message.fds) closeQuietly(fd);
      }
    }
  }

  #handle(request: KeeperRequest, fds: readonly number[]): void {
    switch (request.op) {
      case "spawn": {
        if (this.#sessions.has(request.id)) throw new Error(`Session "${request.id}" is kept already`);
        if (fds.length !== request.targets.length) {
          throw new Error("Descriptors and targets differ in number");
        }
        const child = spawnOnPty({
          argv: request.argv,
          ...(request.argv0 === undefined ? {} : { argv0: request.argv0 }),
          env: request.env,
          ...(request.cwd === undefined ? {} : { cwd: request.cwd }),
          cols: request.cols,
          rows: request.rows,
          tty: request.tty,
          ...(request.ctty === false ? { controllingTerminal: false } : {}),
          inheritFds: fds.map((fd, i) => ({ fd, target: request.targets[i]! })),
        });
        const kept: Kept = {
          id: request.id,
          pid: child.pid,
          master: child.master,
          io: child.io ?? child.master,
          ttyPath: child.ttyPath,
          tty: request.tty,
          status: null,
          held: [],
          heldFrom: 0,
          readTo: 0,
          relay: -1,
          sentTo: 0,
          input: null,
          inputEnd: new InputEnd(),
          eof: false,
          relayClosed: false,
          clients: [],
        };
        this.#sessions.set(kept.id, kept);
        this.#watchTerminal(kept);
        this.#log(`session "${kept.id}" spawned: pid ${kept.pid}`);
        this.#handOver(kept, 0, "spawned");
        this.#reap();
        return;
      }
      case "resume": {
        const kept = this.#kept(request.id);
        if (request.from < kept.heldFrom || request.from > kept.readTo) {
          throw new Error(
            `Output from ${request.from} is not held (held: ${kept.heldFrom} to ${kept.readTo})`,
          );
        }
        this.#log(
          `session "${kept.id}" handed back from output offset ${request.from} (held ${kept.heldFrom} to ${kept.readTo})`,
        );
        this.#handOver(kept, request.from, "resumed");
        if (kept.status !== null) {
          this.#send({ op: "exited", id: kept.id, pid: kept.pid, status: kept.status });
        }
        return;
      }
      case "ack": {
        const kept = this.#sessions.get(request.id);
        if (kept !== undefined) this.#acknowledge(kept, Math.min(request.offset, kept.readTo));
        return;
      }
      case "close_input": {
        const kept = this.#kept(request.id);
        if (kept.tty) {
          throw new UsageError(
            `Session "${kept.id}" runs on a terminal: its input cannot be closed (press "ctrl-d" in it)`,
          );
        }
        // Without a relay, input still on its way was lost with it: the end is now.
        kept.inputEnd.close(kept.relay < 0 ? 0 : request.after);
        this.#endInput(kept);
        return;
      }
      case "release": {
        const kept = this.#sessions.get(request.id);
        if (kept === undefined) return;
        this.#closeRelay(kept);
        this.#dropQueued(kept.id);
        for (const client of kept.clients) reactor().remove(client);
        closeQuietly(kept.master);
        if (kept.io !== kept.master) closeQuietly(kept.io);
        this.#sessions.delete(kept.id);
        const running = kept.status === null;
        if (running) libc().sym.kill(kept.pid, libc().table.signals.KILL);
        this.#log(`session "${kept.id}" released${running ? "; its program was still running: killed" : ""}`);
        return;
      }
    }
  }

  #kept(id: string): Kept {
    const kept = this.#sessions.get(id);
    if (kept === undefined) throw new Error(`No session "${id}" is kept`);
    return kept;
  }

  /** A new relay to the daemon, output resent from `from`: the daemon gets the master and its end. */
  #handOver(kept: Kept, from: number, op: "spawned" | "resumed"): void {
    this.#closeRelay(kept);
    const [ours, theirs] = unixSocketPair("stream", "E_FD_PASSING");
    setNonBlocking(ours);
    setNonBlocking(theirs); // The flag travels with the descriptor: the daemon reads without blocking.
    kept.relay = ours;
    kept.relayClosed = false;
    kept.sentTo = from;
    const relayClient: PollClient = {
      fd: ours,
      interest: () => {
        const { POLLIN, POLLOUT } = libc().table.poll;
        if (kept.relay !== ours) return 0;
        const reading = kept.input === null && kept.inputEnd.room(1) > 0;
        return (reading ? POLLIN : 0) | (kept.sentTo < kept.readTo ? POLLOUT : 0);
      },
      ready: (revents) => this.#relayReady(kept, revents),
      fail: () => this.#closeRelay(kept),
    };
    kept.clients.push(relayClient);
    reactor().add(relayClient);
    this.#send({ op, id: kept.id, pid: kept.pid, tty_path: kept.ttyPath }, [kept.master, theirs], [theirs]);
    this.#flush(kept);
  }

  #closeRelay(kept: Kept): void {
    if (kept.relay < 0) return;
    const relay = kept.relay;
    const client = kept.clients.find((c) => c.fd === relay);
    if (client !== undefined) {
      reactor().remove(client);
      kept.clients = kept.clients.filter((c) => c !== client);
    }
    closeQuietly(relay);
    kept.relay = -1;
    kept.input = null; // Input the daemon sent but the terminal never took is the daemon's to resend.
    kept.inputEnd.relayClosed();
    this.#endInput(kept);
  }

  /** Shuts down the writing side of the program's socket once the input before its end was written. */
  #endInput(kept: Kept): void {
    kept.inputEnd.settle(kept.input === null, () => {
      shutdownWrite(kept.io);
      this.#log(`session "${kept.id}": its input was closed`);
    });
  }

  #watchTerminal(kept: Kept): void {
    const client: PollClient = {
      fd: kept.io,
      interest: () => {
        const { POLLIN, POLLOUT } = libc().table.poll;
        if (kept.eof) return 0;
        const room = kept.readTo - kept.heldFrom < HOLD_CAP;
        return (room ? POLLIN : 0) | (kept.input !== null ? POLLOUT : 0);
      },
      ready: (revents) => this.#terminalReady(kept, revents),
      fail: () => {
        kept.eof = true;
        this.#flush(kept);
      },
    };
    kept.clients.push(client);
    reactor().add(client);
  }

  #terminalReady(kept: Kept, revents: number): void {
    const { sym } = libc();
    if (kept.input !== null) this.#writeInput(kept);
    const { POLLIN, POLLHUP, POLLERR } = libc().table.poll;
    if ((revents & (POLLIN | POLLHUP | POLLERR)) === 0) return;
    while (kept.readTo - kept.heldFrom < HOLD_CAP) {
      const n = Number(sym.read(kept.io, this.#buffer, BigInt(this.#buffer.length)));
      if (n > 0) {
        this.#hold(kept, this.#buffer.subarray(0, n));
        continue;
      }
      if (n < 0 && libc().errno() === libc().table.errno.EAGAIN) break;
      if (n < 0 && libc().errno() === libc().table.errno.EINTR) continue;
      kept.eof = true; // 0 (socket closed) or EIO (every slave closed): the output ended.
      // Usually the program exiting: look for its status now and twice more shortly, rather than wait for
      // SIGCHLD to come through the event loop (milliseconds later).
      this.#reap();
      for (const ms of [1, 3]) setTimeout(this.#reap, ms);
      break;
    }
    this.#flush(kept);
  }

  /**
   * Holds `bytes` (copied). Small reads are merged into the last chunk while it is under
   * {@link MERGE_BYTES}: a chunk per 10-byte read would cost far more memory than {@link HOLD_CAP} says.
   */
  #hold(kept: Kept, bytes: Uint8Array): void {
    const last = kept.held.at(-1);
    // Bytes already sent from the last chunk stay where they are: offsets are counted, not stored.
    if (last !== undefined && last.length + bytes.length <= MERGE_BYTES) {
      const merged = new Uint8Array(last.length + bytes.length);
      merged.set(last);
      merged.set(bytes, last.length);
      kept.held[kept.held.length - 1] = merged;
    } else {
      kept.held.push(bytes.slice());
    }
    kept.readTo += bytes.length;
  }

  /** Sends held output the relay has not had yet; closes the relay's writing side after the end. */
  #flush(kept: Kept): void {
    if (kept.relay < 0) return;
    const { sym } = libc();
    let offset = kept.heldFrom;
    for (const chunk of kept.held) {
      const end = offset + chunk.length;
      while (kept.sentTo < end) {
        const part = chunk.subarray(kept.sentTo - offset);
        const n = Number(sym.write(kept.relay, part, BigInt(part.length)));
        if (n > 0) {
          kept.sentTo += n;
          continue;
        }
        const errno = libc().errno();
        if (n < 0 && errno === libc().table.errno.EINTR) continue;
        if (n < 0 && errno !== libc().table.errno.EAGAIN) {
          this.#log(
            `session "${kept.id}": relaying output failed with errno ${errno}; held for the next daemon`,
          );
          this.#closeRelay(kept);
        }
        reactor().wake();
        return;
      }
      offset = end;
    }
    if (kept.eof && !kept.relayClosed && kept.sentTo === kept.readTo) {
      kept.relayClosed = true;
      shutdownWrite(kept.relay);
    }
    reactor().wake();
  }

  #relayReady(kept: Kept, revents: number): void {
    const { POLLIN, POLLOUT, POLLHUP, POLLERR } = libc().table.poll;
    if ((revents & POLLOUT) !== 0) this.#flush(kept);
    if (kept.relay < 0 || (revents & (POLLIN | POLLHUP | POLLERR)) === 0 || kept.input !== null) return;
    // Not past the end of input (its bytes may come after the `close_input` that counts them).
    const room = kept.inputEnd.room(this.#input.length);
    if (room === 0) return;
    const n = Number(libc().sym.read(kept.relay, this.#input, BigInt(room)));
    if (n > 0) {
      if (!kept.inputEnd.take(n)) return; // After the end of input: dropped.
      kept.input = this.#input.slice(0, n);
      this.#writeInput(kept);
    } else if (n === 0 || (n < 0 && libc().errno() !== libc().table.errno.EAGAIN)) {
      this.#closeRelay(kept); // The daemon is gone; its successor resumes from its log.
    }
  }

  #writeInput(kept: Kept): void {
    const input = kept.input;
    if (input === null) return;
    const n = Number(libc().sym.write(kept.io, input, BigInt(input.length)));
    if (n === input.length) kept.input = null;
    else if (n > 0) kept.input = input.subarray(n);
    else if (n < 0 && libc().errno() !== libc().table.errno.EAGAIN) kept.input = null; // Terminal gone.
    this.#endInput(kept);
    reactor().wake();
  }

  #acknowledge(kept: Kept, offset: number): void {
    while (kept.held.length > 0 && kept.heldFrom + kept.held[0]!.length <= offset) {
      kept.heldFrom += kept.held.shift()!.length;
    }
    const first = kept.held[0];
    if (first !== undefined && offset > kept.heldFrom) {
      kept.held[0] = first.subarray(offset - kept.heldFrom);
      kept.heldFrom = offset;
    }
    reactor().wake(); // Reading may resume.
  }

  /** Reaps every child that ended (sessions' programs and orphans adopted as subreaper). */
  #reap = (): void => {
    const lib = libc();
    for (;;) {
      const pid = lib.sym.waitpid(-1, new Uint8Array(this.#status.buffer), lib.table.wait.WNOHANG);
      if (pid <= 0) return;
      for (const kept of this.#sessions.values()) {
        if (kept.pid !== pid) continue;
        kept.status = this.#status[0]!;
        this.#log(`session "${kept.id}" ended: wait status ${kept.status}`);
        this.#send({ op: "exited", id: kept.id, pid, status: kept.status });
      }
    }
  };
}
