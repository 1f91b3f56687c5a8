/**
 * `specter daemon`: one per user and state directory. It serves named sessions over a unix socket
 * (JSON-RPC 2.0 over NDJSON), logs every frame to the session's durable frame log before any client sees
 * it, and leaves the terminals to its keeper, so that neither a client nor the daemon itself going away
 * ends a session: a restarted daemon takes every session back from the keeper, resuming each terminal's
 * output where its log ends.
 *
 * @module
 */
import { join } from "node:path";
import type { z } from "zod";
import { DaemonError, SessionError, SpecterError, toSpecterError, UsageError } from "../errors.ts";
import {
  type AgentOpenParamsSchema,
  type AttachParamsSchema,
  type CreateParamsSchema,
  DAEMON_PROTOCOL,
  type ExitFrame,
  type Frame,
  FrameSchema,
  JSONRPC_ERRORS,
  type SavedSession,
  SavedSessionSchema,
  type SessionEntry,
} from "../protocol/mod.ts";
import {
  acceptUnix,
  closeQuietly,
  libc,
  listenUnix,
  peerCredentials,
  type PollClient,
  reactor,
  tryLockFile,
} from "../pty/mod.ts";
import {
  adopt,
  auditError,
  auditFrame,
  auditLaunch,
  CommandRows,
  type RunAudit,
  type Session,
  spawn,
  type SpawnOptions,
} from "../session/mod.ts";
import { AUDIT_FILE, AuditLog } from "../artifacts/mod.ts";
import type { AuthorKind, CommandLog } from "../history/mod.ts";
import { fingerprintPlan } from "../sandbox/mod.ts";
import { closeFd, fdProcPath, makeDirsBeneath, openWriteDir, ServiceLog } from "../fsafe/mod.ts";
import { VERSION } from "../version.ts";
import { Connection } from "./connection.ts";
import { type Peer, RemoteServer, type RemoteServerOptions, type WsPeer } from "../remote/mod.ts";
import {
  authorize,
  maySee,
  ptyExitedOf,
  REMOTE_ATTACH_HISTORY_BYTES,
  remoteCreate,
  seenBy,
  startFailure,
} from "./remote_access.ts";
import type { AgentTools, OutputLog } from "../agent/mod.ts";
import type { McpHttp } from "../mcp/mod.ts";
import { AGENT_LOG_SHAPE, sessionOutputLog } from "./agent_output_log.ts";
import { FrameStore, listSegments, readLog, readLogText, type SyncPolicy } from "./frame_store.ts";
import { KeeperClient, type KeptSession } from "./keeper_client.ts";
import { paramsOf, parseRequest, RpcError } from "./request.ts";
import { privateDir, sessionDir } from "./paths.ts";

/** The parameters of `session.create`. */
export type CreateParams = z.infer<typeof CreateParamsSchema>;

/** How a daemon runs. */
export interface DaemonOptions {
  /** Frame logs, saved sessions, the keeper's socket and the lock. */
  readonly stateDir: string;
  /** The socket clients connect to. */
  readonly socketPath: string;
  /** Turns `session.create`'s parameters into spawn options (the CLI's flags of `run`). */
  readonly resolve: (params: CreateParams) => SpawnOptions;
  /** Starts the keeper for `stateDir`, detached (it must outlive the daemon). */
  readonly startKeeper: () => void;
  /** When logged frames are synced to disk (default: every 50 ms). */
  readonly sync?: SyncPolicy;
  /** Told of connections refused or dropped, and of failures that end no session. */
  readonly log?: (text: string) => void;
  /**
   * Starts the network proxy of a session whose policy has an allow list (`null` otherwise); its relay
   * request goes to the launch. Without it such a session is refused (`E_SANDBOX_NETWORK`). The proxy and
   * relay are this daemon's: they end with the session, or with the daemon (the session's network then
   * ends too, closed: a later daemon adopts the session without one).
   */
  readonly net?: (options: SpawnOptions, audit: RunAudit | null) => SessionNet | null;
  /** The spawn options agents' sessions start from (`agent.open`'s flags, as `specter agent` takes them). */
  readonly agentBase?: (flags: CreateParams["flags"], cwd: string) => Promise<Omit<SpawnOptions, "argv">>;
  /**
   * Where sessions' persistent layers go (`--persist`), one directory per session, reachable only by the
   * caller: see `defaultPersistRoot`. Default: `STATE/../persist`.
   */
  readonly persistRoot?: string;
  /** Where each command of a session (a shell's OSC 133 marks) is recorded; null: nowhere. */
  readonly commandLog?: CommandLog | null;
  /**
   * Opens the audit log of a session about to start and records its start (the CLI records the flags, as
   * `run` does); the daemon records the launch, breaches, the end, and each time a restarted daemon takes
   * the session back. Throws (`E_AUDIT`) to refuse the session. None: sessions are not audited.
   */
  readonly audit?: (session: AuditedSession) => RunAudit;
  /**
   * Where the audit log of run `runId` is (as `audit` puts it): a session taken back appends to its log
   * only when the directory its `session.json` names is this one (bytes on disk do not say where to write).
   */
  readonly auditDir?: (runId: string) => string;
  /**
   * A TCP listener too (`--bind`): the web viewer and the JSON-RPC on a WebSocket, for token holders. Its
   * connections are audited in `STATE/remote/audit.ndjson`.
   */
  readonly remote?: RemoteListen;
  /**
   * Answers `daemon.listen` and `daemon.revoke` (unix socket peers only): the CLI changes the listener
   * (through {@link Daemon.relisten}) and remembers it. None: those methods are refused.
   */
  readonly control?: (
    daemon: Daemon,
    method: "daemon.listen" | "daemon.revoke",
    params: unknown,
  ) => Promise<unknown>;
}

/** How the daemon listens on TCP (the server's options that do not come from the daemon itself). */
export type RemoteListen = Omit<RemoteServerOptions, "audit" | "log" | "host" | "accepted">;

/** A session about to start, as its audit's start record names it. */
export interface AuditedSession {
  readonly name: string;
  readonly argv: readonly string[];
  readonly cwd: string;
  /** The flags it was created with (`session.create`'s, or `agent.open`'s for an agent's session). */
  readonly flags: CreateParams["flags"];
  readonly author_kind: AuthorKind;
}

/** Who starts a session, as the command log and the audit name them (decided from the connection). */
interface Author {
  readonly author_kind: AuthorKind;
  readonly author: string | null;
}

/**
 * Who `peer` is: a local client is a person (under the name it gives, if any), a remote one its token's
 * label. What a client says of itself never makes it an agent or a person: agents come through
 * `agent.open`, which names them so.
 */
function authorOf(peer: Peer, named: string | undefined): Author {
  if (peer.access.scope !== "local") return { author_kind: "remote", author: peer.access.label };
  return { author_kind: "human", author: named ?? null };
}

/** Frames of a session's log a restarted daemon reads back to rebuild its screen and tail. */
const RESUME_HISTORY = 5000;
/** Bytes of logged frames an attach sends before the live ones; older ones become an `overflow` frame. */
const ATTACH_HISTORY_BYTES = 32 * 1024 * 1024;
/** How often logged output is acknowledged to the keeper. */
const ACK_MS = 20;

/** A session's network proxy and relay (see {@link DaemonOptions.net}); the CLI's `RunNet`. */
export interface SessionNet {
  /** The relay request for the launch (`SpawnOptions.netRelay`). */
  readonly relay: NonNullable<SpawnOptions["netRelay"]>;
  /** The session its `net` frames go to. */
  attach(session: Session): void;
  /** Ends the relay and the proxy (its open connections are reported). */
  close(): Promise<void>;
}

interface Entry {
  readonly name: string;
  readonly dir: string;
  readonly saved: SavedSession;
  /** The session's audit log, while this daemon runs it. */
  audit: RunAudit | null;
  /** Its network proxy and relay (a network allow list), while this daemon runs it. */
  net: SessionNet | null;
  readonly logId: string;
  session: Session | null;
  store: FrameStore | null;
  watchers: Set<Peer>;
  controller: Peer | null;
  delivered: number;
  acked: number;
  exit: ExitFrame | null;
  /** The last seq the frame log holds (it stops growing when logging failed). */
  loggedTo: number;
  /** Its rows of the command log (none without a command log). */
  rows: CommandRows | null;
  /** Resolves once the session ended and the daemon recorded its end (see `#run`). */
  finished: Promise<void>;
}

const encoder = new TextEncoder();

/** Who MCP clients over HTTP are, to the agent tools: remote clients holding a control token. */
const MCP_CLIENT = {
  name: "MCP over HTTP",
  access: { scope: "control", sessions: null, label: "MCP over HTTP" },
} as const satisfies Pick<Peer, "name" | "access">;

/** A method that answered itself (it had to send frames right after its answer). */
const ANSWERED = Symbol("answered");

/** A running daemon. */
export class Daemon {
  /** Resolves once the daemon stopped. */
  readonly done: Promise<void>;
  readonly #options: DaemonOptions;
  readonly #locks: number[];
  readonly #listener: number;
  readonly #listenClient: PollClient;
  readonly #entries = new Map<string, Entry>();
  readonly #connections = new Set<Peer>();
  #remote: RemoteServer | null = null;
  /** The `/mcp` endpoint, once a client used it. */
  #mcp: McpHttp | null = null;
  /** Agent tools by the flags and directory agents opened them with. */
  readonly #agents = new Map<string, AgentTools>();
  #keeper: KeeperClient;
  readonly #timers: ReturnType<typeof setInterval>[] = [];
  #resolve!: () => void;
  #stopped = false;
  #remoteAudit: AuditLog | null = null;
  readonly #serviceLog: ServiceLog;
  /** When it started (seconds since the epoch), for `daemon.status`. */
  readonly #started = Date.now() / 1000;

  private constructor(options: DaemonOptions, locks: number[], listener: number, keeper: KeeperClient) {
    this.#options = options;
    this.#serviceLog = ServiceLog.open(join(options.stateDir, "daemon.log"));
    this.#locks = locks;
    this.#listener = listener;
    this.#keeper = keeper;
    this.done = new Promise((resolve) => this.#resolve = resolve);
    this.#listenClient = {
      fd: listener,
      interest: () => libc().table.poll.POLLIN,
      ready: () => this.#accept(),
      fail: (error) => this.#log(`listener failed: ${String(error)}`),
    };
    keeper.onClosed = () => this.#keeperLost();
    keeper.onRefused = (id, error) => this.#keeperRefused(id, error);
    this.#timers.push(setInterval(() => this.#acknowledge(), ACK_MS));
    // A client that stopped reading is dropped even when nothing more is sent to it.
    this.#timers.push(setInterval(() => {
      for (const connection of this.#connections) connection.checkStall();
    }, 500));
    const sync = options.sync ?? { everyMs: 50 };
    if (typeof sync === "object") this.#timers.push(setInterval(() => this.#syncAll(), sync.everyMs));
  }

  /**
   * Starts a daemon: takes the state directory's and the socket's locks (`E_DAEMON_LOCKED` when another
   * daemon holds either), replaces a stale socket, connects to the keeper (starting it), takes back
   * every session the keeper holds, then listens.
   */
  static async start(options: DaemonOptions): Promise<Daemon> {
    privateDir(options.stateDir);
    privateDir(join(options.socketPath, ".."));
    const locks: number[] = [];
    for (const path of [join(options.stateDir, "daemon.lock"), `${options.socketPath}.lock`]) {
      const fd = tryLockFile(path);
      if (fd === null) {
        for (const held of locks) closeQuietly(held);
        throw new DaemonError("E_DAEMON_LOCKED", `Another daemon holds "${path}"`, { details: { path } });
      }
      locks.push(fd);
    }
    let keeper: KeeperClient;
    try {
      keeper = await KeeperClient.connect(options.stateDir, options.startKeeper);
    } catch (error: unknown) {
      for (const held of locks) closeQuietly(held);
      throw error;
    }
    try {
      Deno.removeSync(options.socketPath); // Stale: its daemon no longer holds the lock.
    } catch {
      // No socket was left.
    }
    try {
      // A dead daemon's TCP address and tokens (specter url would print them): this one writes its own.
      Deno.removeSync(join(options.stateDir, "remote.json"));
    } catch {
      // None was left.
    }
    const listener = listenUnix(options.socketPath, "stream");
    Deno.chmodSync(options.socketPath, 0o600);
    const daemon = new Daemon(options, locks, listener, keeper);
    if (options.remote !== undefined) {
      try {
        await daemon.#listenRemote(options.remote);
      } catch (error: unknown) {
        await daemon.stop();
        throw error;
      }
    }
    daemon.#takeBack();
    daemon.#loadEnded();
    reactor().add(daemon.#listenClient);
    daemon.#log(
      `listening on "${options.socketPath}" (state "${options.stateDir}", keeper pid ${keeper.keeperPid}, ${keeper.kept.length} session(s) taken back)`,
    );
    return daemon;
  }

  /** Stops serving; sessions go on in the keeper (or are killed with `killSessions`). */
  async stop(killSessions = false): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#log(
      killSessions ? "stopping; its sessions are killed" : "stopping; its sessions go on in the keeper",
    );
    reactor().remove(this.#listenClient);
    closeQuietly(this.#listener);
    this.#mcp?.close();
    if (this.#remote !== null) {
      await this.#remote.close();
      try {
        Deno.removeSync(join(this.#options.stateDir, "remote.json"));
      } catch {
        // Not written, or removed by someone else.
      }
    }
    this.#remoteAudit?.close(); // Also when the listener could not start.
    try {
      Deno.removeSync(this.#options.socketPath);
    } catch {
      // Removed by someone else.
    }
    for (const connection of this.#connections) connection.close();
    if (killSessions) {
      await Promise.all([...this.#entries.values()].map((entry) => entry.session?.terminate(0)));
    }
    for (const timer of this.#timers) clearInterval(timer);
    this.#acknowledge();
    // A session that goes on loses its network with this daemon (its relay and proxy are ours): closed,
    // never open. Their last connections are audited first.
    await Promise.all([...this.#entries.values()].map((entry) => entry.net?.close()));
    for (const entry of this.#entries.values()) {
      entry.store?.close();
      entry.audit?.log.close(); // Its session goes on: the next daemon appends to the log.
    }
    this.#keeper.close();
    for (const fd of this.#locks) closeQuietly(fd);
    this.#serviceLog.close();
    this.#resolve();
  }

  /** `daemon.log` in the state directory (a detached daemon's stderr is /dev/null), and the caller's log. */
  #log(text: string): void {
    this.#serviceLog.write(text);
    this.#options.log?.(text);
  }

  // ── sessions ────────────────────────────────────────────────────────────────────────────────────

  /** Takes back what the keeper holds: each session continues from where its log ends. */
  #takeBack(): void {
    for (const kept of this.#keeper.kept) {
      // One session that cannot be taken back never stops the daemon (nor the others).
      try {
        this.#takeBackOne(kept);
      } catch (error: unknown) {
        this.#log(`session "${kept.id}" cannot be taken back (${String(error)}); the keeper ends it`);
        const entry = this.#entries.get(kept.id);
        entry?.store?.close();
        this.#entries.delete(kept.id);
        this.#keeper.release(kept.id);
      }
    }
  }

  #takeBackOne(kept: KeptSession): void {
    const { id: name, held_from: heldFrom } = kept;
    const dir = sessionDir(this.#options.stateDir, name);
    const saved = SavedSessionSchema.parse(JSON.parse(Deno.readTextFileSync(join(dir, "session.json"))));
    const store = FrameStore.open({
      dir: join(dir, "frames"),
      session: name,
      ...(saved.agent_key === null ? {} : AGENT_LOG_SHAPE),
    });
    const from = Math.max(store.lastRaw, heldFrom);
    const oldest = listSegments(join(dir, "frames"))[0] ?? 0;
    const history = readLog(join(dir, "frames"), {
      from: Math.max(oldest, store.nextSeq - RESUME_HISTORY),
      before: store.nextSeq,
      onCorrupt: (error) => this.#log(error.message),
    }).map((record) => record.frame);
    const entry = this.#entry(name, dir, saved, store);
    entry.delivered = store.nextSeq - 1;
    entry.acked = from;
    const last = history.at(-1);
    if (last?.type === "exit") {
      entry.exit = last;
      store.close();
      entry.store = null;
      this.#keeper.release(name);
      this.#auditEnd(entry, last);
      // Its end recorded as #run records it, so that the next daemon lists it too.
      try {
        Deno.writeTextFileSync(join(dir, "exit.json"), JSON.stringify(last) + "\n", { mode: 0o600 });
      } catch (error: unknown) {
        this.#log(`session "${name}": its end could not be recorded (${String(error)})`);
      }
      return;
    }
    const handed = this.#keeper.resume(name, from);
    entry.session = adopt(
      {
        child: { pid: handed.pid, master: handed.master, io: handed.io, ttyPath: handed.ttyPath },
        backend: saved.backend,
        watcher: this.#keeper,
        // Its cgroups are the keeper's (see #launch): watched again, and removed when it ends.
        cgroups: { placements: saved.cgroups, owner: this.#keeper.keeperPid },
      },
      {
        argv: saved.argv,
        cwd: saved.cwd,
        cols: saved.cols,
        rows: saved.rows,
        // Without a terminal its input can be closed (the keeper knows; the saved session does not say).
        ...(kept.tty ? {} : { tty: false }),
        id: name,
        title: saved.title ?? undefined,
        description: saved.description ?? undefined,
        parentAgent: saved.parent_agent ?? undefined,
        // Its shell's marks are checked with the nonce they were made with.
        ...(saved.mark_nonce === null ? {} : { commandMarkNonce: saved.mark_nonce }),
        // Its deadline and output budget go on (counted from `started` and the output offset).
        ...(saved.timeout_ms === null ? {} : { timeoutMs: saved.timeout_ms }),
        ...(saved.limits === null ? {} : {
          limits: {
            memoryBytes: saved.limits.memory_bytes ?? undefined,
            cpuSeconds: saved.limits.cpu_seconds ?? undefined,
            processes: saved.limits.processes ?? undefined,
            fileSizeBytes: saved.limits.file_size_bytes ?? undefined,
          },
        }),
        ...(saved.max_output === null ? {} : { maxOutputBytes: saved.max_output }),
        // Not set up again: the program runs in the sandbox it was started in (adopt spawns nothing).
        sandbox: { mode: "none", acknowledge: "unsafe-no-sandbox" },
      },
      {
        sink: (frame) => this.#sink(entry, frame),
        endInput: (written) => this.#keeper.closeInput(name, written),
        resume: {
          nextSeq: store.nextSeq,
          history,
          outputOffset: from,
          started: saved.started,
          inputClosed: kept.input_closed,
        },
      },
    );
    this.#log(
      `session "${name}" taken back: pid ${handed.pid}, output from offset ${from}, next seq ${store.nextSeq}`,
    );
    entry.rows = this.#rowsFor(entry);
    entry.rows?.seed(history);
    entry.audit = this.#resumeAudit(entry, {
      session_id: name,
      pid: handed.pid,
      output_offset: from,
      next_seq: store.nextSeq,
      keeper_pid: this.#keeper.keeperPid,
    });
    this.#run(entry);
  }

  /** Sessions that ended before this daemon started: listed from their exit records. */
  #loadEnded(): void {
    let names: string[] = [];
    try {
      names = [...Deno.readDirSync(join(this.#options.stateDir, "sessions"))].map((entry) => entry.name);
    } catch {
      return; // No session was ever made here.
    }
    for (const name of names) {
      if (this.#entries.has(name)) continue;
      const dir = sessionDir(this.#options.stateDir, name);
      try {
        const saved = SavedSessionSchema.parse(JSON.parse(Deno.readTextFileSync(join(dir, "session.json"))));
        const parsed = FrameSchema.parse(JSON.parse(Deno.readTextFileSync(join(dir, "exit.json"))));
        if (parsed.type !== "exit") continue;
        const exit = parsed;
        const entry = this.#entry(name, dir, saved, null);
        entry.exit = exit;
        entry.delivered = exit.seq;
        entry.loggedTo = exit.seq;
      } catch {
        // Not a session directory, or one without its end recorded: not listed.
      }
    }
  }

  #entry(name: string, dir: string, saved: SavedSession, store: FrameStore | null): Entry {
    const entry: Entry = {
      name,
      dir,
      saved,
      logId: store?.logId ?? "",
      session: null,
      store,
      watchers: new Set(),
      controller: null,
      delivered: -1,
      acked: 0,
      audit: null,
      net: null,
      exit: null,
      loggedTo: (store?.nextSeq ?? 0) - 1,
      rows: null,
      finished: Promise.resolve(),
    };
    this.#entries.set(name, entry);
    return entry;
  }

  /** Writes a frame to the session's log before any reader can take it. */
  #sink(entry: Entry, frame: Frame): void {
    const store = entry.store;
    if (store === null) return;
    try {
      store.append(
        frame,
        entry.session?.outputConsumed ?? store.lastRaw,
        this.#options.sync === "always" ? "always" : "never",
      );
      entry.loggedTo = frame.seq;
    } catch (error: unknown) {
      entry.store = null;
      store.close();
      const specter = toSpecterError(error);
      this.#log(`session "${entry.name}": ${specter.message}`);
      // Told after the frame being logged (the sink runs inside the session's emit).
      queueMicrotask(() => {
        if (entry.session?.finished === false) {
          entry.session.reportError("E_LOG_WRITE", `Frame logging stopped: ${specter.message}`, {
            cause_code: specter.code,
          });
        }
      });
    }
  }

  /**
   * What no session may see or write: the keeper's socket and the logs, the daemon's socket, the command
   * log, the persistent layers (a session's own is bound by descriptor, not through a grant).
   */
  #protectedDirs(): string[] {
    const log = this.#options.commandLog;
    return [
      this.#options.stateDir,
      join(this.#options.socketPath, ".."),
      this.#persistRoot(),
      ...(log === undefined || log === null ? [] : [join(log.path, "..")]),
    ];
  }

  /** A keeper that died took its sessions; the next session gets a new one. */
  async #withKeeper(): Promise<void> {
    if (!this.#keeper.closed) return;
    const keeper = await KeeperClient.connect(this.#options.stateDir, this.#options.startKeeper);
    keeper.onClosed = () => this.#keeperLost();
    keeper.onRefused = (id, error) => this.#keeperRefused(id, error);
    this.#keeper = keeper;
  }

  /** The keeper refused a message for session `id` nobody waits on (a `close_input`): its frames say so. */
  #keeperRefused(id: string, error: SpecterError): void {
    this.#log(`the keeper refused a message for session "${id}": ${error.message}`);
    const session = this.#entries.get(id)?.session;
    if (session !== null && session !== undefined && !session.finished) {
      session.reportError(error.code, error.message);
    }
  }

  #create(params: CreateParams, by: Author): Entry {
    const existing = this.#entries.get(params.name);
    if (existing !== undefined && existing.exit === null) {
      if (params.if_exists === "reuse") return existing;
      throw new DaemonError("E_SESSION_EXISTS", `Session "${params.name}" is running`, {
        details: { name: params.name },
      });
    }
    let options = this.#options.resolve(params);
    if (params.persist) {
      // The root and each layer: 0700, the caller's alone (the sandbox runs as the caller, root's too).
      // Made and changed by descriptor, never through a link: a layer is a program's writable home, and
      // an earlier one may have planted a link where the next is made (the launch then opens the layer
      // without following any link, too).
      const rootFd = openWriteDir(this.#persistRoot(), { create: true, mode: 0o700 });
      try {
        Deno.chmodSync(fdProcPath(rootFd), 0o700);
        closeFd(makeDirsBeneath(rootFd, params.name, 0o700));
      } finally {
        closeFd(rootFd);
      }
      options = { ...options, persistDir: this.#persistDir(params.name) };
    }
    const entry = this.#launch(
      params.name,
      options,
      {
        author_kind: by.author_kind,
        author: by.author,
        cwd: params.cwd,
      },
      false,
      params.flags,
    );
    return entry;
  }

  /**
   * Where a session's persistent layer lives: beside the state directory (`STATE/../persist/NAME`), not in
   * it, since no session may see the state directory, while this one is its home.
   */
  #persistDir(name: string): string {
    return join(this.#persistRoot(), name);
  }

  #persistRoot(): string {
    return this.#options.persistRoot ?? join(this.#options.stateDir, "..", "persist");
  }

  /** The output log of an agent's session `name`: its durable frame log (none when it has no store). */
  #agentOutputLog(name: string): OutputLog | null {
    const entry = this.#entries.get(name);
    if (entry === undefined || entry.store === null) return null;
    return sessionOutputLog(join(entry.dir, "frames"), () => entry.loggedTo);
  }

  /** An agent's session: a named session of the daemon (`agent-N`), read by the agent's tools too. */
  #launchForAgent(
    options: SpawnOptions,
    flags: CreateParams["flags"],
    agentKey: string,
  ): { session: Session; id: string } {
    let n = this.#entries.size + 1;
    while (this.#entries.has(`agent-${n}`)) n++;
    const name = `agent-${n}`;
    const entry = this.#launch(
      name,
      options,
      { author_kind: "agent", author: null, cwd: options.cwd ?? "/", agentKey },
      true,
      flags,
    );
    return { session: entry.session!, id: name };
  }

  #launch(
    name: string,
    options: SpawnOptions,
    who: Author & { cwd: string; agentKey?: string },
    shared: boolean,
    flags: CreateParams["flags"],
  ): Entry {
    const dir = sessionDir(this.#options.stateDir, name);
    try {
      Deno.removeSync(dir, { recursive: true }); // An ended session of that name: its log goes.
    } catch (error: unknown) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const store = FrameStore.open({
      dir: join(dir, "frames"),
      session: name,
      ...(who.agentKey === undefined ? {} : AGENT_LOG_SHAPE),
    });
    let audit: RunAudit | null = null;
    try {
      // An audited session never runs unaudited: a log that cannot be opened refuses the session.
      audit = this.#options.audit?.({
        name,
        argv: options.argv,
        cwd: options.cwd ?? who.cwd,
        flags,
        author_kind: who.author_kind,
      }) ?? null;
    } catch (error: unknown) {
      store.close();
      Deno.removeSync(dir, { recursive: true });
      throw error;
    }
    const holder: { entry: Entry | null } = { entry: null };
    const early: Frame[] = [];
    let session: Session;
    let net: SessionNet | null = null;
    try {
      // The audit directory is guarded as `run`'s artifacts are: out of the program's sight and reach.
      // Its parent too: every daemon session's audit is there, and no session may rewrite another's.
      const audited = audit === null ? options : { ...options, artifacts: audit.dir };
      const guarded = [...this.#protectedDirs(), ...(audit === null ? [] : [join(audit.dir, "..")])];
      net = this.#options.net?.(audited, audit) ?? null;
      const relay = net === null ? {} : { netRelay: net.relay };
      session = spawn({ ...audited, id: name, protectedDirs: guarded, ...relay }, {
        spawner: (request) => this.#keeper.spawn(name, request),
        watcher: this.#keeper,
        // The keeper holds the session across restarts of the daemon: its cgroups are the keeper's.
        cgroupOwner: this.#keeper.keeperPid,
        hooks: {
          sink: (frame) => {
            if (holder.entry !== null) this.#sink(holder.entry, frame);
            else early.push(frame);
          },
          endInput: (written) => this.#keeper.closeInput(name, written),
        },
      });
    } catch (error: unknown) {
      store.close();
      Deno.removeSync(dir, { recursive: true });
      void net?.close(); // The program never ran: no connection to report.
      if (audit !== null) {
        auditError(audit, error);
        audit.log.close();
      }
      throw error;
    }
    if (audit !== null) {
      auditLaunch(audit, session, { daemon_session: name, persist: options.persistDir ?? null });
    }
    const saved: SavedSession = {
      name,
      argv: [...session.argv],
      cwd: options.cwd ?? who.cwd,
      cols: options.cols ?? 80,
      rows: options.rows ?? 24,
      started: Date.now() / 1000,
      pid: session.pid,
      backend: session.launch.backend,
      title: session.info.title ?? null,
      description: session.info.description ?? null,
      parent_agent: session.info.parent_agent ?? null,
      policy_hash: session.launch.plan === null ? null : fingerprintPlan(session.launch.plan).policy_sha256,
      author_kind: who.author_kind,
      author: who.author,
      mark_nonce: session.markNonce,
      persist: options.persistDir ?? null,
      agent_key: who.agentKey ?? null,
      audit: audit === null ? null : { run_id: audit.runId, dir: audit.dir },
      // As launched: the policy's budgets applied (they may be lower than the flags').
      timeout_ms: session.launch.timeoutMs,
      max_output: session.launch.maxOutputBytes,
      limits: {
        memory_bytes: session.launch.limits.memoryBytes,
        cpu_seconds: session.launch.limits.cpuSeconds,
        processes: session.launch.limits.processes,
        file_size_bytes: session.launch.limits.fileSizeBytes,
      },
      cgroups: [...session.launch.cgroups],
    };
    Deno.writeTextFileSync(join(dir, "session.json"), JSON.stringify(saved) + "\n", { mode: 0o600 });
    const entry = this.#entry(name, dir, saved, store);
    entry.session = session;
    entry.audit = audit;
    entry.net = net;
    net?.attach(session);
    entry.rows = this.#rowsFor(entry);
    holder.entry = entry;
    for (const frame of early) this.#sink(entry, frame);
    this.#log(
      `session "${name}" started: pid ${session.pid}, ${session.launch.backend}, argv[0] "${saved.argv[0]}"`,
    );
    // An agent's tools take the session's frames as its main reader; the daemon then reads its own copy.
    const reader = shared ? session.subscribe({ from: 0, authoritative: true }) : null;
    this.#run(entry, reader === null ? () => session.nextFrames() : () => reader.take());
    return entry;
  }

  /** Reads the session's frames (every frame must be taken, or it pauses) and fans them out. */
  #run(entry: Entry, next: () => Promise<Frame[]> = () => entry.session!.nextFrames()): void {
    const session = entry.session!;
    entry.finished = (async () => {
      for (;;) {
        const batch = await next();
        if (batch.length === 0) break;
        for (const frame of batch) {
          entry.delivered = frame.seq;
          if (entry.audit !== null) auditFrame(entry.audit, frame);
          entry.rows?.frame(frame);
          for (const watcher of entry.watchers) this.#sendFrame(watcher, entry.name, frame);
        }
      }
      const exit = await session.exited;
      entry.exit = exit;
      this.#log(
        `session "${entry.name}" ended: ${
          exit.signal === null ? `code ${exit.code}` : `signal ${exit.signal}`
        }${exit.timed_out ? " (timed out)" : ""}`,
      );
      entry.store?.close();
      entry.store = null;
      // Its last connections are audited as the proxy closes: before the audit log is.
      await entry.net?.close();
      entry.net = null;
      this.#closeAudit(entry);
      this.#keeper.release(entry.name);
      try {
        Deno.writeTextFileSync(join(entry.dir, "exit.json"), JSON.stringify(exit) + "\n", { mode: 0o600 });
      } catch (error: unknown) {
        this.#log(`session "${entry.name}": its end could not be recorded (${String(error)})`);
      }
      const notice = ptyExitedOf(entry.name, exit, entry.saved);
      for (const watcher of entry.watchers) {
        // The viewer's notice goes to remote clients (the unix socket's have the exit frame as their last).
        if (watcher.access.scope !== "local") this.#sendFrame(watcher, entry.name, notice);
        watcher.send({ jsonrpc: "2.0", method: "session.end", params: { name: entry.name } });
      }
      entry.watchers.clear();
      entry.controller = null;
    })();
  }

  /**
   * Appends to the audit log of a session taken back (its chain continues: `resume`, then what the first
   * daemon would have recorded). A log that cannot be appended to (its chain broken, its disk full) is
   * said in the daemon's log and as an `E_AUDIT` error frame: the program already runs and is not killed
   * for it, but nobody is left to believe it audited.
   */
  #resumeAudit(entry: Entry, fields: Record<string, unknown> | null): RunAudit | null {
    const where = entry.saved.audit;
    if (where === null) return null;
    let audit: RunAudit;
    try {
      const expected = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(where.run_id)
        ? this.#options.auditDir?.(where.run_id)
        : undefined;
      if (expected !== where.dir) {
        throw new SessionError("E_AUDIT", `"${where.dir}" is not where run "${where.run_id}" is audited`);
      }
      audit = { runId: where.run_id, dir: where.dir, log: AuditLog.open(where.dir, where.run_id) };
      if (fields !== null) audit.log.record("resume", fields);
      if (audit.log.failure !== null) throw audit.log.failure;
    } catch (error: unknown) {
      const specter = toSpecterError(error);
      this.#log(`session "${entry.name}": its audit log cannot go on: ${specter.message}`);
      entry.session?.reportError("E_AUDIT", `The session's audit log cannot go on: ${specter.message}`, {
        dir: where.dir,
      });
      return null;
    }
    return audit;
  }

  /** The command log rows of a session (null without a command log). */
  #rowsFor(entry: Entry): CommandRows | null {
    const log = this.#options.commandLog;
    if (log === undefined || log === null) return null;
    const saved = entry.saved;
    return new CommandRows(log, {
      session: entry.name,
      argv: saved.argv,
      cwd: saved.cwd,
      policyHash: saved.policy_hash,
      authorKind: saved.author_kind,
      author: saved.author,
    }, (error) => this.#log(`session "${entry.name}": ${toSpecterError(error).message}`));
  }

  /**
   * The session ended and its log has the exit, but the daemon that logged it died before its audit did:
   * the audit gets its `end` (once: a log that ends with one is left as it is).
   */
  #auditEnd(entry: Entry, exit: ExitFrame): void {
    const where = entry.saved.audit;
    if (where === null) return;
    try {
      const lines = Deno.readTextFileSync(join(where.dir, AUDIT_FILE)).trimEnd().split("\n");
      if ((JSON.parse(lines.at(-1)!) as { event?: unknown }).event === "end") return;
    } catch {
      // Unreadable or not a record: #resumeAudit says why when it opens it.
    }
    const audit = this.#resumeAudit(entry, null);
    if (audit === null) return;
    auditFrame(audit, exit);
    audit.log.close();
  }

  /** Closes a session's audit log, saying in the daemon's log when records were lost (a full disk). */
  #closeAudit(entry: Entry): void {
    const audit = entry.audit;
    if (audit === null) return;
    entry.audit = null;
    const failure = audit.log.failure;
    if (failure !== null) this.#log(`session "${entry.name}": ${failure.code}: ${failure.message}`);
    audit.log.close();
  }

  #sendFrame(connection: Peer, name: string, frame: Frame): void {
    connection.send({ jsonrpc: "2.0", method: "frame", params: { name, frame } });
  }

  /** Tells the keeper what the logs hold, so it stops holding it. */
  #acknowledge(): void {
    this.#keeper.flushQueued();
    for (const entry of this.#entries.values()) {
      if (entry.session === null || entry.exit !== null) continue;
      const offset = entry.store?.lastRaw ?? entry.session.outputConsumed;
      if (offset > entry.acked) {
        entry.acked = offset;
        this.#keeper.ack(entry.name, offset);
      }
    }
  }

  #syncAll(): void {
    for (const entry of this.#entries.values()) {
      try {
        entry.store?.sync();
      } catch (error: unknown) {
        this.#log(`session "${entry.name}": ${toSpecterError(error).message}`);
      }
    }
  }

  #keeperLost(): void {
    this.#log("the keeper went away: its sessions ended");
    for (const entry of this.#entries.values()) {
      if (entry.session !== null && !entry.session.finished) {
        entry.session.reportError("E_KEEPER", "The keeper that held this session's terminal went away");
      }
    }
  }

  #describe(entry: Entry): SessionEntry {
    const exit = entry.exit;
    return {
      name: entry.name,
      pid: entry.saved.pid,
      running: exit === null,
      exit_code: exit?.code ?? null,
      signal: exit?.signal ?? null,
      timed_out: exit?.timed_out ?? false,
      duration_ms: exit?.duration_ms ?? null,
      started: entry.saved.started,
      argv: entry.saved.argv,
      title: entry.saved.title,
      description: entry.saved.description,
      parent_agent: entry.saved.parent_agent,
      clients: entry.watchers.size,
      next_seq: entry.delivered + 1,
      log_id: entry.logId === "" ? null : entry.logId,
      persist: entry.saved.persist,
      audit: entry.saved.audit === null ? null : join(entry.saved.audit.dir, AUDIT_FILE),
    };
  }

  #named(name: string): Entry {
    const entry = this.#entries.get(name);
    if (entry === undefined) {
      throw new SessionError("E_SESSION_UNKNOWN", `No session is named "${name}"`, { details: { name } });
    }
    return entry;
  }

  // ── clients ─────────────────────────────────────────────────────────────────────────────────────

  /** Starts the TCP listener, its audit log, and `remote.json` (for `specter url`). */
  async #listenRemote(listen: RemoteListen): Promise<void> {
    const dir = join(this.#options.stateDir, "remote");
    const audit = AuditLog.open(dir, `daemon-${Deno.pid}-${Date.now()}`);
    this.#remoteAudit = audit;
    this.#remote = await RemoteServer.start({
      ...listen,
      audit,
      log: (text) => this.#log(text),
      host: {
        // The peer waits for its calls (a few at a time): a client cannot queue unbounded work.
        line: (peer, line) => this.#line(peer, line),
        closed: (peer, reason) => this.#closed(peer, reason),
      },
      accepted: (peer: WsPeer) => this.#connections.add(peer),
      mcp: async (request) => {
        // MCP (and the agent tools) load with the first request to /mcp: most daemons serve none.
        if (this.#mcp === null) {
          const { McpHttp } = await import("../mcp/mod.ts");
          // Every MCP client's sessions run as a remote client's agent with no flags: the default policy,
          // in "/" (a remote client names no host path); they outlive the MCP session that started them.
          this.#mcp ??= new McpHttp(() => this.#agentTools(MCP_CLIENT, "/", {}));
        }
        return await this.#mcp.handle(request);
      },
    });
    this.#log(`listening on ${this.#remote.url} too (the web viewer and ${"/v1/ws"}; audit in "${dir}")`);
  }

  /** The TCP listener's address, when it listens. */
  get remoteUrl(): string | null {
    return this.#remote?.url ?? null;
  }

  /**
   * Replaces the TCP listener (`specter daemon listen`, a token revoked): the current one closes with its
   * connections (a page reconnects, and learns whether its token still holds), then `listen` starts, or
   * none. When the new one cannot start, none listens (the error is thrown). Resolves with its address.
   */
  async relisten(listen: RemoteListen | null): Promise<string | null> {
    if (this.#stopped) throw new DaemonError("E_DAEMON_UNAVAILABLE", "The daemon is stopping");
    if (this.#remote !== null) {
      const old = this.#remote;
      this.#remote = null;
      await old.close();
      this.#log(`stopped listening on ${old.url}`);
    }
    this.#remoteAudit?.close();
    this.#remoteAudit = null;
    if (listen === null) return null;
    try {
      await this.#listenRemote(listen);
    } catch (error: unknown) {
      // #listenRemote opened the audit log before the server failed to start.
      (this.#remoteAudit as AuditLog | null)?.close();
      this.#remoteAudit = null;
      this.#remote = null;
      throw error;
    }
    return this.remoteUrl;
  }

  #accept(): void {
    for (;;) {
      let fd: number | null;
      try {
        fd = acceptUnix(this.#listener);
      } catch (error: unknown) {
        this.#log(`accept failed: ${String(error)}`);
        return;
      }
      if (fd === null) return;
      let peer;
      try {
        peer = peerCredentials(fd);
      } catch {
        closeQuietly(fd);
        continue;
      }
      const connection = new Connection(fd, peer.pid, {
        line: (c, line) => void this.#line(c, line),
        closed: (c, reason) => this.#closed(c, reason),
      });
      this.#connections.add(connection);
      if (peer.uid !== Deno.uid()) {
        this.#log(`refused pid ${peer.pid}: uid ${peer.uid} is not ${Deno.uid()}`);
        this.#refuse(
          connection,
          null,
          new DaemonError("E_DAEMON_PEER", `Peers of uid ${peer.uid} are refused`),
        );
      }
    }
  }

  #closed(connection: Peer, reason: string): void {
    this.#connections.delete(connection);
    try {
      connection.agentInput?.close();
    } catch {
      // Closed already.
    }
    for (const entry of this.#entries.values()) {
      entry.watchers.delete(connection);
      if (entry.controller === connection) entry.controller = null;
    }
    if (reason.startsWith("dropped")) this.#log(`client ${connection.name} ${reason}`);
  }

  #refuse(connection: Peer, id: string | number | null, error: SpecterError): void {
    connection.send({
      jsonrpc: "2.0",
      id,
      error: { code: JSONRPC_ERRORS.SERVER_ERROR, message: error.message, data: error.toJSON() },
    });
    connection.closeAfterSending();
  }

  async #line(connection: Peer, line: string | Error): Promise<void> {
    if (connection.agentInput !== null) {
      // The agent tools' own server reads this connection now (it answers bad lines itself).
      if (typeof line === "string") connection.agentInput.enqueue(encoder.encode(line + "\n"));
      return;
    }
    if (line instanceof Error) {
      this.#refuse(connection, null, new DaemonError("E_DAEMON_PEER", `Refused: ${line.message}`));
      return;
    }
    let request;
    try {
      request = parseRequest(line);
    } catch (error: unknown) {
      this.#refuse(connection, null, error as DaemonError);
      return;
    }
    const id = request.id ?? null;
    if (!connection.greeted && request.method !== "daemon.hello") {
      this.#refuse(
        connection,
        id,
        new DaemonError("E_DAEMON_PEER", 'Refused: the first call must be "daemon.hello"'),
      );
      return;
    }
    try {
      authorize(connection, request.method, request.params ?? {});
      const result = await this.#call(connection, request.method, request.params ?? {}, id);
      if (request.id !== undefined && result !== ANSWERED) connection.send({ jsonrpc: "2.0", id, result });
    } catch (error: unknown) {
      if (request.id === undefined) return;
      if (error instanceof RpcError) {
        connection.send({
          jsonrpc: "2.0",
          id,
          error: { code: error.code, message: error.message, ...(error.data ? { data: error.data } : {}) },
        });
        return;
      }
      const specter = toSpecterError(error);
      connection.send({
        jsonrpc: "2.0",
        id,
        error: { code: JSONRPC_ERRORS.SERVER_ERROR, message: specter.message, data: specter.toJSON() },
      });
      if (specter.code === "E_PROTOCOL_VERSION") connection.closeAfterSending();
    }
  }

  #call(connection: Peer, method: string, params: unknown, id: string | number | null): unknown {
    switch (method) {
      case "daemon.hello": {
        const { protocol, compress } = paramsOf("daemon.hello", params);
        if (protocol !== DAEMON_PROTOCOL) {
          throw new SpecterError(
            "E_PROTOCOL_VERSION",
            `The daemon speaks protocol ${DAEMON_PROTOCOL}, not ${protocol}`,
          );
        }
        connection.greeted = true;
        const remote = connection.access.scope !== "local";
        const agreed = remote && compress === "zstd" && this.#options.remote?.compress === "zstd"
          ? "zstd"
          : "none";
        // Answered before the switch: the client reads this answer as it asked.
        connection.send({
          jsonrpc: "2.0",
          id,
          result: {
            protocol: DAEMON_PROTOCOL,
            version: VERSION,
            pid: Deno.pid,
            // Where the daemon keeps its files is the user's business, not a remote client's.
            state_dir: remote ? "" : this.#options.stateDir,
            scope: connection.access.scope,
            ...(remote ? { compress: agreed } : {}),
          },
        });
        if (agreed === "zstd") connection.compress(true);
        return ANSWERED;
      }
      case "session.create": {
        const create = remoteCreate(connection, paramsOf("session.create", params));
        const by = authorOf(connection, create.author);
        return this.#withKeeper().then(() => this.#create(create, by)).catch((error: unknown) => {
          throw this.#startFailed(connection, error);
        }).then((entry) => {
          const described = seenBy(connection, this.#describe(entry));
          if (!create.attach) return described;
          // Attached from its first frame, as `session.attach` does, answered with the session: no second
          // round trip, no window in which a frame is missed.
          return this.#attach(connection, { name: entry.name, control: true }, id, described);
        });
      }
      case "session.list": {
        return {
          sessions: [...this.#entries.values()].filter((entry) => maySee(connection, entry.name)).map(
            (entry) => seenBy(connection, this.#describe(entry)),
          ),
        };
      }
      case "session.attach": {
        const attach = paramsOf("session.attach", params);
        // A viewer watches: it never takes control (it may not type or resize).
        return this.#attach(
          connection,
          connection.access.scope === "viewer" ? { ...attach, control: false } : attach,
          id,
        );
      }
      case "session.detach": {
        const entry = this.#named(paramsOf("session.detach", params).name);
        entry.watchers.delete(connection);
        if (entry.controller === connection) entry.controller = null;
        return {};
      }
      case "session.send": {
        const { name, message } = paramsOf("session.send", params);
        const entry = this.#named(name);
        if (entry.watchers.has(connection) && entry.controller !== connection) {
          if (entry.controller !== null) {
            throw new UsageError(`Session "${name}" is controlled by another client; this one watches`);
          }
          entry.controller = connection;
        }
        if (entry.session === null || entry.exit !== null) {
          throw new SessionError("E_SESSION_CLOSED", `Session "${name}" has ended`);
        }
        entry.session.send(message);
        return {};
      }
      case "session.screen": {
        const entry = this.#named(paramsOf("session.screen", params).name);
        if (entry.session === null) {
          throw new SessionError(
            "E_SESSION_CLOSED",
            `Session "${entry.name}" ended before this daemon started`,
          );
        }
        return entry.session.screen();
      }
      case "session.kill": {
        const { name, purge } = paramsOf("session.kill", params);
        return this.#kill(this.#named(name), purge);
      }
      case "agent.open":
        return this.#openAgent(
          connection,
          remoteCreate(connection, paramsOf("agent.open", params)),
          id,
        );
      case "daemon.stop": {
        const kill = (params as { kill_sessions?: unknown }).kill_sessions === true;
        setTimeout(() => void this.stop(kill), 10);
        return {};
      }
      case "daemon.status": {
        const now = Date.now() / 1000;
        const entries = [...this.#entries.values()];
        return {
          running: true,
          pid: Deno.pid,
          version: VERSION,
          started: this.#started,
          uptime_s: Math.round(now - this.#started),
          socket: this.#options.socketPath,
          state_dir: this.#options.stateDir,
          listener: this.remoteUrl,
          sessions: entries.length,
          running_sessions: entries.filter((entry) => entry.exit === null).length,
          keeper_pid: this.#keeper.closed ? null : this.#keeper.keeperPid,
        };
      }
      case "daemon.listen":
      case "daemon.revoke": {
        if (this.#options.control === undefined) {
          throw new RpcError(JSONRPC_ERRORS.METHOD_NOT_FOUND, `Unknown method "${method}"`);
        }
        return this.#options.control(this, method, params);
      }
      default:
        throw new RpcError(JSONRPC_ERRORS.METHOD_NOT_FOUND, `Unknown method "${method}"`);
    }
  }

  /**
   * What `peer` is told of a session that could not start (see `startFailure`); the reason is logged when
   * a remote client is told less. `null`: a unix socket peer.
   */
  #startFailed(peer: Pick<Peer, "name" | "access"> | null, error: unknown): unknown {
    const remote = peer !== null && peer.access.scope !== "local";
    const told = startFailure(remote, error);
    if (told !== error) {
      const specter = toSpecterError(error);
      this.#log(
        `remote client ${peer!.name}: a program could not start: ${specter.code}: ${specter.message}`,
      );
    }
    return told;
  }

  /**
   * The agent tools for `cwd` and `flags` (one set per directory and flags, remote clients' apart): made
   * with the first agent that asks, found again by every later one (`agent.open`, and MCP over HTTP).
   */
  async #agentTools(
    connection: Pick<Peer, "name" | "access">,
    cwd: string,
    flags: CreateParams["flags"],
  ): Promise<AgentTools> {
    const agentBase = this.#options.agentBase;
    if (agentBase === undefined) throw new UsageError("This daemon serves no agent tools");
    // Remote clients' agents have tools of their own, which tell them of sessions that cannot start only
    // that they cannot (see `startFailure`).
    const remote = connection.access.scope !== "local";
    const sorted = Object.entries(flags).sort();
    const key = JSON.stringify(remote ? ["remote", cwd, sorted] : [cwd, sorted]);
    // The agent tools (and their tokenizer's tables) load with the first agent: most daemons serve none.
    const { AgentTools } = await import("../agent/mod.ts");
    let tools = this.#agents.get(key);
    if (tools === undefined) {
      let base;
      try {
        base = await agentBase(flags, cwd);
      } catch (error: unknown) {
        throw this.#startFailed(connection, error);
      }
      const who = remote ? connection : null;
      tools = new AgentTools({
        base,
        // read_output pages through the session's own durable frame log.
        outputLog: (name) => this.#agentOutputLog(name),
        spawn: (options) => {
          try {
            return this.#launchForAgent(options, flags, key);
          } catch (error: unknown) {
            throw this.#startFailed(who, error);
          }
        },
      });
      this.#agents.set(key, tools);
      // Its sessions that a restarted daemon took back: the tools find them again (list_sessions, ids).
      for (const entry of this.#entries.values()) {
        if (entry.saved.agent_key === key && entry.session !== null && entry.exit === null) {
          tools.adopt(entry.name, entry.session, entry.saved.cwd);
        }
      }
    }
    return tools;
  }

  /** Switches `connection` to the agent tools (after the answer, every line is theirs). */
  async #openAgent(
    connection: Peer,
    params: z.infer<typeof AgentOpenParamsSchema>,
    id: string | number | null,
  ): Promise<symbol> {
    const tools = await this.#agentTools(connection, params.cwd, params.flags);
    const { serveAgent } = await import("../agent/mod.ts");
    connection.send({ jsonrpc: "2.0", id, result: { agent: true } });
    const input = new ReadableStream<Uint8Array>({
      start: (controller) => {
        connection.agentInput = controller;
      },
    });
    void serveAgent(
      tools,
      {
        input,
        write: (bytes) => {
          connection.sendBytes(bytes);
          return Promise.resolve();
        },
      },
      undefined,
      true,
    ).catch((error: unknown) => this.#log(`agent connection: ${String(error)}`));
    return ANSWERED;
  }

  /**
   * Ends a session, answered once it has ended and its end is recorded (and, with `purge`, its files are
   * gone), so that `kill --purge NAME` then `new NAME` never races.
   */
  async #kill(entry: Entry, purge: boolean): Promise<Record<string, never>> {
    const session = entry.session;
    if (session !== null && entry.exit === null) {
      await session.terminate();
      await entry.finished;
    }
    // The name may have been taken by a new session meanwhile: only this one's files go.
    if (purge && this.#entries.get(entry.name) === entry) this.#purge(entry);
    return {};
  }

  #purge(entry: Entry): void {
    this.#entries.delete(entry.name);
    try {
      // The layer the program wrote (links in it are removed, never followed), then the session's files.
      // Derived from the name, not read back from session.json (bytes on disk are not trusted to say
      // what to delete).
      if (entry.saved.persist !== null) Deno.removeSync(this.#persistDir(entry.name), { recursive: true });
      Deno.removeSync(entry.dir, { recursive: true });
    } catch (error: unknown) {
      this.#log(`session "${entry.name}": its files could not be removed (${String(error)})`);
    }
  }

  /** Attaches `connection`: the answer (`answer`, else an attach result), logged frames, then live ones. */
  #attach(
    connection: Peer,
    params: z.infer<typeof AttachParamsSchema>,
    id: string | number | null,
    answer?: SessionEntry,
  ): symbol {
    const entry = this.#named(params.name);
    const logId = entry.logId === "" ? null : entry.logId;
    if (params.log_id !== undefined && params.log_id !== logId) {
      // A client resuming a log that is gone (the session was made again): its seqs mean nothing here.
      throw new DaemonError(
        "E_LOG_SEEK",
        `Session "${entry.name}" has log "${logId}", not "${params.log_id}"`,
        {
          details: { log_id: logId },
        },
      );
    }
    const oldest = listSegments(join(entry.dir, "frames"))[0] ?? 0;
    // A seq before what rotation kept: an error for a client resuming (it would miss frames), the oldest
    // kept for one that only asks for history.
    if (params.from !== undefined && params.from < oldest && params.log_id !== undefined) {
      throw new DaemonError("E_LOG_SEEK", `Session "${entry.name}" no longer holds frame ${params.from}`, {
        details: { from: params.from, oldest },
      });
    }
    const from = Math.max(params.from ?? 0, oldest);
    const control = params.control && entry.exit === null &&
      (entry.controller === null || entry.controller === connection || params.take === true);
    if (control && entry.controller !== null && entry.controller !== connection) {
      // Taken: the client that had control watches from now on, and is told so (specter attach --take).
      entry.controller.send({
        jsonrpc: "2.0",
        method: "session.control",
        params: { name: entry.name, control: false },
      });
    }
    const logged = Math.min(entry.delivered, entry.loggedTo);
    const dropped: { range: [number, number] | null } = { range: null };
    const records: { seq: number; text: string }[] = from <= logged
      ? readLogText(join(entry.dir, "frames"), {
        from,
        to: logged,
        // A damaged record claiming a seq the log was never given is not sent (nor ends the reading early).
        before: entry.loggedTo + 1,
        ...(params.log_id === undefined ? {} : { logId: params.log_id }),
        onCorrupt: (error) => this.#log(error.message),
        // A huge history is sent as its tail: the client's queue stays bounded (see `HARD_UNSENT_BYTES`), and a
        // remote client's smaller still (reading it holds the daemon's thread).
        tailBytes: connection.access.scope === "local" ? ATTACH_HISTORY_BYTES : REMOTE_ATTACH_HISTORY_BYTES,
        onDropped: (first, last) => dropped.range = [first, last],
      })
      : [];
    if (dropped.range !== null) {
      const [first, last] = dropped.range;
      const overflow: Frame = {
        seq: last,
        ts: Date.now() / 1000,
        type: "overflow",
        reason: "lagged",
        missed_from: first,
        missed_to: last,
      };
      records.unshift({ seq: last, text: JSON.stringify(overflow) });
    }
    // Delivered but not logged (logging failed): from the session's memory, which keeps the latest
    // frames (an `overflow` frame stands in for older ones).
    if (entry.delivered > logged && entry.session !== null) {
      const memory = entry.session.subscribe({ from: Math.max(from, logged + 1) });
      for (const frame of memory.takeNow()) {
        if (frame.seq <= entry.delivered) records.push({ seq: frame.seq, text: JSON.stringify(frame) });
      }
      memory.close();
    }
    if (control) entry.controller = connection;
    // The answer, the logged frames, then the live ones: all in this turn, so that none is missed.
    connection.send({
      jsonrpc: "2.0",
      id,
      result: answer ?? {
        name: entry.name,
        log_id: entry.logId === "" ? null : entry.logId,
        control,
        next_seq: entry.delivered + 1,
      },
    });
    // One write for the whole history: a frame per write() costs more than reading the log did.
    if (records.length > 0) {
      const name = JSON.stringify(entry.name);
      const lines = records.map((record) =>
        `{"jsonrpc":"2.0","method":"frame","params":{"name":${name},"frame":${record.text}}}\n`
      );
      connection.sendBytes(encoder.encode(lines.join("")));
    }
    if (entry.exit === null) entry.watchers.add(connection);
    else {
      if (connection.access.scope !== "local") {
        this.#sendFrame(connection, entry.name, ptyExitedOf(entry.name, entry.exit, entry.saved));
      }
      connection.send({ jsonrpc: "2.0", method: "session.end", params: { name: entry.name } });
    }
    return ANSWERED;
  }
}
