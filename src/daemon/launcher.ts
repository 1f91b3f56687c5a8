/**
 * Launching: a named session made from `session.create`'s parameters (or an agent's `agent-N`), its
 * directory, frame log, audit log, network and persistent layer set up, spawned through the keeper with
 * the daemon's own directories out of its reach, saved (`session.json`), registered and run. Also what a
 * client is told of a session that could not start.
 *
 * @module
 */
import { join } from "node:path";
import { DaemonError, toSpecterError } from "../errors.ts";
import type { Frame, SavedSession } from "../protocol/mod.ts";
import {
  auditError,
  auditLaunch,
  type RunAudit,
  type Session,
  spawn,
  type SpawnOptions,
} from "../session/mod.ts";
import type { AuthorKind } from "../history/mod.ts";
import { fingerprintPlan } from "../sandbox/mod.ts";
import { closeFd, fdProcPath, makeDirsBeneath, openWriteDir } from "../fsafe/mod.ts";
import type { Peer } from "../remote/mod.ts";
import { startFailure } from "./remote_access.ts";
import { AGENT_LOG_SHAPE } from "./agent_output_log.ts";
import { FrameStore } from "./frame_store.ts";
import type { KeeperLink } from "./keeper_link.ts";
import type { Entry, Registry } from "./registry.ts";
import type { SessionHost } from "./session_host.ts";
import type { SessionRecords } from "./session_records.ts";
import { sessionDir } from "./paths.ts";
import type { CreateParams, DaemonConfig, DaemonLog, SessionNet } from "./options.ts";

/** Who starts a session, as the command log and the audit name them (decided from the connection). */
export interface Author {
  readonly author_kind: AuthorKind;
  readonly author: string | null;
}

/**
 * Who `peer` is: a local client is a person (under the name it gives, if any), a remote one its token's
 * label. What a client says of itself never makes it an agent or a person: agents come through
 * `agent.open`, which names them so.
 */
export function authorOf(peer: Peer, named: string | undefined): Author {
  if (peer.access.scope !== "local") return { author_kind: "remote", author: peer.access.label };
  return { author_kind: "human", author: named ?? null };
}

/** The options launching reads. */
export type LaunchOptions = Pick<
  DaemonConfig,
  "stateDir" | "socketPath" | "resolve" | "audit" | "net" | "persistRoot" | "commandLog"
>;

/** Starts the daemon's sessions. */
export class Launcher {
  readonly #options: LaunchOptions;
  readonly #registry: Registry;
  readonly #keeper: KeeperLink;
  readonly #host: SessionHost;
  readonly #records: SessionRecords;
  readonly #log: DaemonLog;

  constructor(
    options: LaunchOptions,
    parts: { registry: Registry; keeper: KeeperLink; host: SessionHost; records: SessionRecords },
    log: DaemonLog,
  ) {
    this.#options = options;
    this.#registry = parts.registry;
    this.#keeper = parts.keeper;
    this.#host = parts.host;
    this.#records = parts.records;
    this.#log = log;
  }

  /** `session.create`: the session `params` name (the running one with `if_exists: "reuse"`). */
  create(params: CreateParams, by: Author): Entry {
    const existing = this.#registry.get(params.name);
    if (existing !== undefined && existing.exit === null) {
      if (params.if_exists === "reuse") return existing;
      throw new DaemonError(
        "E_SESSION_EXISTS",
        `Session "${params.name}" is running: attach to it (specter attach ${params.name}) or end it first ` +
          `(specter kill ${params.name})`,
        {
          details: { name: params.name },
        },
      );
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
      options = { ...options, persistDir: this.persistDir(params.name) };
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

  /** An agent's session: a named session of the daemon (`agent-N`), read by the agent's tools too. */
  launchForAgent(
    options: SpawnOptions,
    flags: CreateParams["flags"],
    agentKey: string,
  ): { session: Session; id: string } {
    let n = this.#registry.size + 1;
    while (this.#registry.has(`agent-${n}`)) n++;
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

  /**
   * Where a session's persistent layer lives: beside the state directory (`STATE/../persist/NAME`), not in
   * it, since no session may see the state directory, while this one is its home.
   */
  persistDir(name: string): string {
    return join(this.#persistRoot(), name);
  }

  /**
   * What `peer` is told of a session that could not start (see `startFailure`); the reason is logged when
   * a remote client is told less. `null`: a unix socket peer.
   */
  startFailed(peer: Pick<Peer, "name" | "access"> | null, error: unknown): unknown {
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

  #persistRoot(): string {
    return this.#options.persistRoot ?? join(this.#options.stateDir, "..", "persist");
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
      const keeper = this.#keeper.client;
      session = spawn({ ...audited, id: name, protectedDirs: guarded, ...relay }, {
        spawner: (request) => this.#keeper.client.spawn(name, request),
        watcher: keeper,
        // The keeper holds the session across restarts of the daemon: its cgroups are the keeper's.
        cgroupOwner: keeper.keeperPid,
        hooks: {
          sink: (frame) => {
            if (holder.entry !== null) this.#host.sink(holder.entry, frame);
            else early.push(frame);
          },
          endInput: (written) => this.#keeper.client.closeInput(name, written),
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
    const saved = savedOf(name, session, options, who, audit);
    Deno.writeTextFileSync(join(dir, "session.json"), JSON.stringify(saved) + "\n", { mode: 0o600 });
    const entry = this.#registry.add(name, dir, saved, store);
    entry.session = session;
    entry.audit = audit;
    entry.net = net;
    net?.attach(session);
    entry.rows = this.#records.rowsFor(entry);
    holder.entry = entry;
    for (const frame of early) this.#host.sink(entry, frame);
    this.#log(
      `session "${name}" started: pid ${session.pid}, ${session.launch.backend}, argv[0] "${saved.argv[0]}"`,
    );
    // An agent's tools take the session's frames as its main reader; the daemon then reads its own copy.
    const reader = shared ? session.subscribe({ from: 0, authoritative: true }) : null;
    this.#host.run(entry, reader === null ? () => session.nextFrames() : () => reader.take());
    return entry;
  }
}

/** The session as launched, as `session.json` saves it for the daemon that takes it back. */
function savedOf(
  name: string,
  session: Session,
  options: SpawnOptions,
  who: Author & { cwd: string; agentKey?: string },
  audit: RunAudit | null,
): SavedSession {
  return {
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
}
