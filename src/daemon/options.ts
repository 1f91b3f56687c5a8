/**
 * How a daemon runs: the options its rooms read (every one but the listener's `control`, which names the
 * daemon itself: see `DaemonOptions` in `daemon.ts`), and the shapes they pass between them.
 *
 * @module
 */
import type { z } from "zod";
import type { CreateParamsSchema } from "../protocol/mod.ts";
import type { RunAudit, Session, SpawnOptions } from "../session/mod.ts";
import type { AuthorKind, CommandLog } from "../history/mod.ts";
import type { RemoteServerOptions } from "../remote/mod.ts";
import type { SyncPolicy } from "./frame_store.ts";

/** The parameters of `session.create`. */
export type CreateParams = z.infer<typeof CreateParamsSchema>;

/** How a daemon runs, but for the control of its listener (`DaemonOptions` adds it). */
export interface DaemonConfig {
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

/** A session's network proxy and relay (see {@link DaemonConfig.net}); the CLI's `RunNet`. */
export interface SessionNet {
  /** The relay request for the launch (`SpawnOptions.netRelay`). */
  readonly relay: NonNullable<SpawnOptions["netRelay"]>;
  /** The session its `net` frames go to. */
  attach(session: Session): void;
  /** Ends the relay and the proxy (its open connections are reported). */
  close(): Promise<void>;
}

/** Where the daemon writes what it did (`daemon.log`, and the caller's `log`). */
export type DaemonLog = (text: string) => void;
