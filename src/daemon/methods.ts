/**
 * The RPC method table: one small handler per JSON-RPC method, its parameters checked against the
 * method's schema at the door (`request.ts`), and the door itself: what a client's line goes through
 * before a handler runs (a request, `daemon.hello` first, the peer's scope) and how its answer or error
 * is sent.
 *
 * @module
 */
import type { z } from "zod";
import { DaemonError, SessionError, SpecterError, toSpecterError, UsageError } from "../errors.ts";
import { DAEMON_PROTOCOL, JSONRPC_ERRORS } from "../protocol/mod.ts";
import type { Peer } from "../remote/mod.ts";
import { VERSION } from "../version.ts";
import { authorize, maySee, remoteCreate, seenBy } from "./remote_access.ts";
import { type CheckedMethod, type METHOD_PARAMS, paramsOf, parseRequest, RpcError } from "./request.ts";
import { attach } from "./attach.ts";
import type { AgentBridge } from "./agent_bridge.ts";
import { authorOf, type Launcher } from "./launcher.ts";
import type { KeeperLink } from "./keeper_link.ts";
import type { Peers } from "./peers.ts";
import type { Registry } from "./registry.ts";
import type { SessionHost } from "./session_host.ts";
import type { DaemonConfig, DaemonLog } from "./options.ts";

/** What the methods work with: the daemon's rooms and the little of the daemon itself they answer about. */
export interface MethodContext {
  readonly options: Pick<DaemonConfig, "stateDir" | "socketPath" | "remote">;
  readonly registry: Registry;
  readonly launcher: Launcher;
  readonly host: SessionHost;
  readonly agents: AgentBridge;
  readonly keeper: KeeperLink;
  readonly peers: Peers;
  /** When the daemon started (seconds since the epoch), for `daemon.status`. */
  readonly started: number;
  /** The TCP listener's address, when it listens. */
  remoteUrl(): string | null;
  stop(killSessions: boolean): Promise<void>;
  /** Answers `daemon.listen` and `daemon.revoke` (see `DaemonOptions.control`); null: refused. */
  readonly control: ((method: "daemon.listen" | "daemon.revoke", params: unknown) => Promise<unknown>) | null;
  readonly log: DaemonLog;
}

type Id = string | number | null;

/** A method: its result (or {@link ANSWERED}), given the peer, the raw parameters and the request's id. */
type Handler = (daemon: MethodContext, peer: Peer, params: unknown, id: Id) => unknown;

/** A method that answered itself (it had to send frames right after its answer). */
const ANSWERED = Symbol("answered");

const encoder = new TextEncoder();

/** A handler whose parameters are checked against `method`'s schema before it runs. */
function checked<M extends CheckedMethod>(
  method: M,
  handle: (daemon: MethodContext, peer: Peer, params: z.output<(typeof METHOD_PARAMS)[M]>, id: Id) => unknown,
): Handler {
  return (daemon, peer, params, id) => handle(daemon, peer, paramsOf(method, params), id);
}

/** `daemon.listen` and `daemon.revoke`: the CLI's, when it gave the daemon a `control`. */
function control(method: "daemon.listen" | "daemon.revoke"): Handler {
  return (daemon, _peer, params) => {
    if (daemon.control === null) {
      throw new RpcError(JSONRPC_ERRORS.METHOD_NOT_FOUND, `Unknown method "${method}"`);
    }
    return daemon.control(method, params);
  };
}

/** Every method, by name (a `Map`: a name such as `toString` is no method). */
const METHODS: ReadonlyMap<string, Handler> = new Map<string, Handler>([
  [
    "daemon.hello",
    checked("daemon.hello", (daemon, connection, { protocol, compress }, id) => {
      if (protocol !== DAEMON_PROTOCOL) {
        throw new SpecterError(
          "E_PROTOCOL_VERSION",
          `The daemon speaks protocol ${DAEMON_PROTOCOL}, not ${protocol}`,
        );
      }
      connection.greeted = true;
      const remote = connection.access.scope !== "local";
      const agreed = remote && compress === "zstd" && daemon.options.remote?.compress === "zstd"
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
          state_dir: remote ? "" : daemon.options.stateDir,
          scope: connection.access.scope,
          ...(remote ? { compress: agreed } : {}),
        },
      });
      if (agreed === "zstd") connection.compress(true);
      return ANSWERED;
    }),
  ],
  [
    "session.create",
    checked("session.create", (daemon, connection, params, id) => {
      const create = remoteCreate(connection, params);
      const by = authorOf(connection, create.author);
      return daemon.keeper.ensure().then(() => daemon.launcher.create(create, by)).catch((error: unknown) => {
        throw daemon.launcher.startFailed(connection, error);
      }).then((entry) => {
        const described = seenBy(connection, daemon.registry.describe(entry));
        if (!create.attach) return described;
        // Attached from its first frame, as `session.attach` does, answered with the session: no second
        // round trip, no window in which a frame is missed.
        attach(
          daemon.registry.named(entry.name),
          connection,
          { name: entry.name, control: true },
          id,
          daemon.log,
          described,
        );
        return ANSWERED;
      });
    }),
  ],
  ["session.list", (daemon, connection) => ({
    sessions: [...daemon.registry.values()].filter((entry) => maySee(connection, entry.name)).map(
      (entry) => seenBy(connection, daemon.registry.describe(entry)),
    ),
  })],
  [
    "session.attach",
    checked("session.attach", (daemon, connection, params, id) => {
      // A viewer watches: it never takes control (it may not type or resize).
      const asked = connection.access.scope === "viewer" ? { ...params, control: false } : params;
      attach(daemon.registry.named(asked.name), connection, asked, id, daemon.log);
      return ANSWERED;
    }),
  ],
  [
    "session.detach",
    checked("session.detach", (daemon, connection, { name }) => {
      const entry = daemon.registry.named(name);
      entry.watchers.delete(connection);
      if (entry.controller === connection) entry.controller = null;
      return {};
    }),
  ],
  [
    "session.send",
    checked("session.send", (daemon, connection, { name, message }) => {
      const entry = daemon.registry.named(name);
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
    }),
  ],
  [
    "session.screen",
    checked("session.screen", (daemon, _connection, { name }) => {
      const entry = daemon.registry.named(name);
      if (entry.session === null) {
        throw new SessionError(
          "E_SESSION_CLOSED",
          `Session "${entry.name}" ended before this daemon started`,
        );
      }
      return entry.session.screen();
    }),
  ],
  [
    "session.kill",
    checked("session.kill", async (daemon, _connection, { name, purge }) => {
      // Answered once it has ended and its end is recorded (and, with `purge`, its files are gone), so
      // that `kill --purge NAME` then `new NAME` never races.
      const entry = daemon.registry.named(name);
      await daemon.host.end(entry);
      // The name may have been taken by a new session meanwhile: only this one's files go.
      if (purge && daemon.registry.get(entry.name) === entry) {
        daemon.registry.purge(entry, daemon.launcher.persistDir(entry.name));
      }
      return {};
    }),
  ],
  [
    "agent.open",
    checked("agent.open", async (daemon, connection, params, id) => {
      await daemon.agents.open(connection, remoteCreate(connection, params), id);
      return ANSWERED;
    }),
  ],
  ["daemon.stop", (daemon, _connection, params) => {
    const kill = (params as { kill_sessions?: unknown }).kill_sessions === true;
    setTimeout(() => void daemon.stop(kill), 10);
    return {};
  }],
  ["daemon.status", (daemon) => {
    const now = Date.now() / 1000;
    const entries = [...daemon.registry.values()];
    return {
      running: true,
      pid: Deno.pid,
      version: VERSION,
      started: daemon.started,
      uptime_s: Math.round(now - daemon.started),
      socket: daemon.options.socketPath,
      state_dir: daemon.options.stateDir,
      listener: daemon.remoteUrl(),
      sessions: entries.length,
      running_sessions: entries.filter((entry) => entry.exit === null).length,
      keeper_pid: daemon.keeper.client.closed ? null : daemon.keeper.client.keeperPid,
    };
  }],
  ["daemon.listen", control("daemon.listen")],
  ["daemon.revoke", control("daemon.revoke")],
]);

/**
 * Serves one line of `connection`: a request, after `daemon.hello`, allowed by its scope, answered with its
 * method's result or error (a notification is answered with nothing). A peer that speaks the agent tools
 * (after `agent.open`) has its lines go to them.
 */
export async function serveLine(
  daemon: MethodContext,
  connection: Peer,
  line: string | Error,
): Promise<void> {
  if (connection.agentInput !== null) {
    // The agent tools' own server reads this connection now (it answers bad lines itself).
    if (typeof line === "string") connection.agentInput.enqueue(encoder.encode(line + "\n"));
    return;
  }
  if (line instanceof Error) {
    daemon.peers.refuse(connection, null, new DaemonError("E_DAEMON_PEER", `Refused: ${line.message}`));
    return;
  }
  let request;
  try {
    request = parseRequest(line);
  } catch (error: unknown) {
    daemon.peers.refuse(connection, null, error as DaemonError);
    return;
  }
  const id = request.id ?? null;
  if (!connection.greeted && request.method !== "daemon.hello") {
    daemon.peers.refuse(
      connection,
      id,
      new DaemonError("E_DAEMON_PEER", 'Refused: the first call must be "daemon.hello"'),
    );
    return;
  }
  try {
    authorize(connection, request.method, request.params ?? {});
    const result = await call(daemon, connection, request.method, request.params ?? {}, id);
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

function call(daemon: MethodContext, connection: Peer, method: string, params: unknown, id: Id): unknown {
  const handler = METHODS.get(method);
  if (handler === undefined) {
    throw new RpcError(JSONRPC_ERRORS.METHOD_NOT_FOUND, `Unknown method "${method}"`);
  }
  return handler(daemon, connection, params, id);
}
