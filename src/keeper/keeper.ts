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
 * This file is the coordinator: the connection to the daemon is `daemon_link.ts`, each held session (its
 * terminal, held output and relay) is `kept_session.ts`.
 *
 * @module
 */
import { join } from "node:path";
import {
  closeQuietly,
  libc,
  listenUnix,
  type PollClient,
  raiseOpenFileLimit,
  reactor,
  spawnOnPty,
  tryLockFile,
} from "../pty/mod.ts";
import type { KeeperEvent, KeeperRequest } from "../protocol/mod.ts";
import { UsageError } from "../errors.ts";
import { ServiceLog } from "../fsafe/mod.ts";
import { DaemonLink } from "./daemon_link.ts";
import { INPUT_CAP, KeptSession, READ_CHUNK } from "./kept_session.ts";
import { keeperIdleGrace, type OrphanReason, OrphanWatch } from "./orphan_watch.ts";

export { MAX_KEEPER_MESSAGE, MAX_SPAWN_FDS } from "./daemon_link.ts";
export { HOLD_CAP } from "./kept_session.ts";

const PR_SET_CHILD_SUBREAPER = 36;

/** The keeper's files in a state directory. */
export function keeperPaths(stateDir: string): { socket: string; lock: string; log: string } {
  return {
    socket: join(stateDir, "keeper.sock"),
    lock: join(stateDir, "keeper.lock"),
    log: join(stateDir, "keeper.log"),
  };
}

/** How a keeper runs (the defaults are what `specter keeper` uses). */
export interface RunKeeperOptions {
  /**
   * How long the keeper waits, holding no session, for a daemon (see `orphan_watch.ts`); default: the
   * `SPECTER_KEEPER_IDLE_MS` environment variable, else 30 s ({@link keeperIdleGrace}).
   */
  readonly idleGraceMs?: number;
}

/**
 * Runs the keeper for `stateDir` until it has no session and no daemon, or nobody can reach it any more
 * (see `orphan_watch.ts`). Returns false when one runs already.
 */
export function runKeeper(stateDir: string, options: RunKeeperOptions = {}): Promise<boolean> {
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
  const orphan = new OrphanWatch(stateDir, { graceMs: options.idleGraceMs ?? keeperIdleGrace() });
  const keeper = new Keeper(listenUnix(paths.socket, "seqpacket"), log, orphan);
  return keeper.done.then((why) => {
    log.write(`keeper done: ${why.text}`);
    log.close();
    // A state directory that is gone may have been made again, with another keeper's socket in it.
    if (why.reason !== "state-gone") {
      try {
        Deno.removeSync(paths.socket);
      } catch {
        // Already gone.
      }
    }
    closeQuietly(lock);
    return true;
  });
}

/** The coordinator: the daemon's link, the kept sessions, reaping, and when to end. */
class Keeper {
  /** Resolves once the keeper has ended: why (a line for its log), and whether on its own. */
  readonly done: Promise<{ text: string; reason: OrphanReason | null }>;
  readonly #listener: number;
  readonly #sessions = new Map<string, KeptSession>();
  readonly #link: DaemonLink;
  #listenClient: PollClient;
  #resolve!: (why: { text: string; reason: OrphanReason | null }) => void;
  #finished = false;
  readonly #orphan: OrphanWatch;
  #status = new Int32Array(1);
  /** What every kept session needs of the keeper (one object: the buffers are reused by all). */
  readonly #host = {
    send: (event: KeeperEvent, fds?: readonly number[], owned?: readonly number[]) =>
      this.#link.send(event, fds, owned),
    log: (text: string) => this.#log(text),
    reap: () => this.#reap(),
    buffer: new Uint8Array(READ_CHUNK),
    input: new Uint8Array(INPUT_CAP),
  };

  readonly #serviceLog: ServiceLog;

  constructor(listener: number, log: ServiceLog, orphan: OrphanWatch) {
    this.#listener = listener;
    this.#serviceLog = log;
    this.#orphan = orphan;
    this.done = new Promise((resolve) => this.#resolve = resolve);
    this.#link = new DaemonLink(listener, {
      connected: () => this.#connected(),
      request: (request, fds) => this.#handle(request, fds),
      dropped: () => this.#dropped(),
      log: (text) => this.#log(text),
    });
    this.#listenClient = {
      fd: listener,
      interest: () => libc().table.poll.POLLIN,
      ready: () => this.#link.accept(),
      fail: (error) => this.#log(`listener failed: ${String(error)}`),
    };
    reactor().add(this.#listenClient);
    Deno.addSignalListener("SIGCHLD", this.#reap);
    // SIGCHLD can coalesce: a slow tick catches the rest. It also asks whether the keeper is orphaned.
    const tick = setInterval(() => {
      this.#reap();
      this.#checkOrphaned();
    }, 1000);
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

  /** A daemon connected: it is told what is kept. */
  #connected(): void {
    this.#orphan.daemonSeen();
    // One message per session (a packet has a size limit; a thousand sessions would not fit in one).
    for (const kept of this.#sessions.values()) {
      this.#link.send({
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
    this.#link.send({ op: "hello", pid: Deno.pid, count: this.#sessions.size });
    this.#log(`a daemon connected; ${this.#sessions.size} session(s) kept`);
  }

  /** The daemon was dropped: every relay goes with it (the next daemon gets new ones). */
  #dropped(): void {
    this.#orphan.daemonSeen();
    for (const kept of this.#sessions.values()) kept.closeRelay();
    this.#maybeDone();
  }

  #maybeDone(): void {
    if (!this.#link.connected && this.#sessions.size === 0) {
      this.#finish({ text: "no session and no daemon left", reason: null });
    }
  }

  /** Ends the keeper when nobody can reach it any more (see `orphan_watch.ts`). */
  #checkOrphaned(): void {
    if (this.#finished) return;
    const reason = this.#orphan.check(this.#link.connected, this.#sessions.size);
    if (reason === null) return;
    if (reason === "idle") {
      this.#finish({ text: "no session and no daemon for the idle grace", reason });
      return;
    }
    // No daemon can connect (its socket went with the directory) or take these sessions back.
    this.#log(`the state directory is gone: ending ${this.#sessions.size} session(s)`);
    for (const kept of this.#sessions.values()) {
      kept.closeRelay();
      kept.close();
      const running = kept.status === null;
      if (running) libc().sym.kill(kept.pid, libc().table.signals.KILL);
      this.#log(`session "${kept.id}" ended with the keeper${running ? "; its program was killed" : ""}`);
    }
    this.#sessions.clear();
    this.#finish({ text: "its state directory is gone", reason });
  }

  /** Stops listening and resolves {@link done} (once). */
  #finish(why: { text: string; reason: OrphanReason | null }): void {
    if (this.#finished) return;
    this.#finished = true;
    reactor().remove(this.#listenClient);
    closeQuietly(this.#listener);
    this.#resolve(why);
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
        const kept = new KeptSession({
          id: request.id,
          pid: child.pid,
          master: child.master,
          io: child.io ?? child.master,
          ttyPath: child.ttyPath,
          tty: request.tty,
        }, this.#host);
        this.#sessions.set(kept.id, kept);
        this.#log(`session "${kept.id}" spawned: pid ${kept.pid}`);
        kept.handOver(0, "spawned");
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
        kept.handOver(request.from, "resumed");
        if (kept.status !== null) {
          this.#link.send({ op: "exited", id: kept.id, pid: kept.pid, status: kept.status });
        }
        return;
      }
      case "ack": {
        const kept = this.#sessions.get(request.id);
        if (kept !== undefined) kept.acknowledge(Math.min(request.offset, kept.readTo));
        return;
      }
      case "close_input": {
        const kept = this.#kept(request.id);
        if (kept.tty) {
          throw new UsageError(
            `Session "${kept.id}" runs on a terminal: its input cannot be closed (press "ctrl-d" in it)`,
          );
        }
        kept.closeInput(request.after);
        return;
      }
      case "release": {
        const kept = this.#sessions.get(request.id);
        if (kept === undefined) return;
        kept.closeRelay();
        this.#link.dropQueued(kept.id);
        kept.close();
        this.#sessions.delete(kept.id);
        const running = kept.status === null;
        if (running) libc().sym.kill(kept.pid, libc().table.signals.KILL);
        this.#log(`session "${kept.id}" released${running ? "; its program was still running: killed" : ""}`);
        return;
      }
    }
  }

  #kept(id: string): KeptSession {
    const kept = this.#sessions.get(id);
    if (kept === undefined) throw new Error(`No session "${id}" is kept`);
    return kept;
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
        this.#link.send({ op: "exited", id: kept.id, pid, status: kept.status });
      }
    }
  };
}
