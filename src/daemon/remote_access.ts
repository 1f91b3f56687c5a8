/**
 * What remote clients may do, and what they are told when a program exits:
 *
 * - a *viewer* token may list sessions, attach to watch (never to control), take snapshots and detach;
 * - a *control* token may also start, drive and kill sessions and open the agent tools;
 * - a token given a list of sessions sees only those (and may start only those names);
 * - stopping the daemon, its status and its listener are for the unix socket's peers (the user's own
 *   processes) only.
 *
 * @module
 */
import { type ErrorCode, SpawnError, SpecterError } from "../errors.ts";
import { isPresetName, PRESET_NAMES } from "../policy/mod.ts";
import type { ExitFrame, PtyExitedFrame, SavedSession, SessionEntry } from "../protocol/mod.ts";
import { type Peer, RemoteError } from "../remote/mod.ts";

/** Methods a viewer token may call. */
export const VIEWER_METHODS: ReadonlySet<string> = new Set([
  "daemon.hello",
  "session.list",
  "session.attach",
  "session.detach",
  "session.screen",
]);
/** Methods only the unix socket's peers may call. */
export const LOCAL_METHODS: ReadonlySet<string> = new Set([
  "daemon.stop",
  "daemon.status",
  "daemon.listen",
  "daemon.revoke",
]);

/** Refuses (`E_REMOTE_SCOPE`) a call the peer's token does not allow; records the session it names. */
export function authorize(peer: Peer, method: string, params: unknown): void {
  const { scope, sessions } = peer.access;
  if (scope === "local") return;
  if (LOCAL_METHODS.has(method)) {
    throw new RemoteError(
      "E_REMOTE_SCOPE",
      `"${method.slice(0, 60)}" is only taken on the daemon's unix socket`,
    );
  }
  if (scope === "viewer" && !VIEWER_METHODS.has(method)) {
    throw new RemoteError(
      "E_REMOTE_SCOPE",
      `A viewer token may only watch sessions: "${method.slice(0, 60)}" needs a control token`,
    );
  }
  if (method === "agent.open" && sessions !== null) {
    throw new RemoteError("E_REMOTE_SCOPE", "A token given a list of sessions cannot open the agent tools");
  }
  if (method === "session.attach" || method === "session.screen") spend(peer, method);
  const name = (params as { name?: unknown } | null)?.name;
  if (typeof name !== "string") return;
  if (sessions !== null && !sessions.has(name)) {
    throw new RemoteError("E_REMOTE_SCOPE", `This token is not given session "${name.slice(0, 64)}"`);
  }
  peer.touched.add(name.slice(0, 64));
}

/**
 * The `run` flags a remote client may give `session.create` and `agent.open`: what to run and how it looks,
 * and budgets. Nothing that weakens the sandbox or names a host path (`--sandbox none`, the `--ack-*` and
 * `--unsafe-*` acknowledgements, a policy file, `--cwd`, recordings, artifacts), and no `--prompt-regex` (a
 * client's regular expression would run on the daemon's thread without a deadline). Presets only, by name.
 */
export const REMOTE_CREATE_FLAGS: ReadonlySet<string> = new Set([
  "policy",
  "sandbox-profile",
  "sandbox",
  "strict-write",
  "shell",
  "env",
  "cols",
  "rows",
  "title",
  "description",
  "parent-agent",
  "idle",
  "timeout",
  "max-output",
  "max-memory",
  "max-cpu",
  "max-procs",
  "max-file-size",
  "buffer",
  "overflow-timeout",
  "grace",
  "last-lines",
]);

/**
 * A remote client's flags and directory for a new session (or agent tools): refused (`E_REMOTE_SCOPE`) when
 * a flag is not in {@link REMOTE_CREATE_FLAGS}, the policy is not a preset's name, or the sandbox is not
 * bwrap; the directory becomes `/` (a preset that grants the working directory then refuses it as a broad
 * root: a remote client names no host path). Unix socket peers' parameters are returned as they are.
 */
export function remoteCreate<T extends { cwd: string; flags: Record<string, unknown> }>(
  peer: Peer,
  params: T,
): T {
  if (peer.access.scope === "local") return params;
  for (const [name, value] of Object.entries(params.flags)) {
    if (value === false || value === undefined) continue;
    if (!REMOTE_CREATE_FLAGS.has(name)) {
      throw new RemoteError(
        "E_REMOTE_SCOPE",
        `Flag "--${name.slice(0, 40)}" is not taken from a remote client`,
      );
    }
  }
  for (const name of ["policy", "sandbox-profile"]) {
    const value = params.flags[name];
    // A preset's name exactly: any other name is read as a file in the daemon's directory, and whether
    // that file exists, is a directory or is unreadable would come back in the error.
    if (value !== undefined && (typeof value !== "string" || !isPresetName(value))) {
      throw new RemoteError(
        "E_REMOTE_SCOPE",
        `A remote client names a policy preset (${PRESET_NAMES.join(", ")}), not a file ("--${name}")`,
      );
    }
  }
  const sandbox = params.flags.sandbox;
  if (sandbox !== undefined && sandbox !== "auto" && sandbox !== "bwrap") {
    throw new RemoteError("E_REMOTE_SCOPE", "A remote client's sessions run in the bwrap sandbox");
  }
  return { ...params, cwd: "/" };
}

/** What a remote client is told of any program that cannot start. */
export const REMOTE_START_FAILURE = "The program could not be started";

/**
 * The codes a remote client is told as they are when its session cannot start: they are about its request
 * (a name in use, a malformed flag, its token), never about the host's files.
 */
const REMOTE_START_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "E_SESSION_EXISTS",
  "E_USAGE",
  "E_UNSAFE_ACK_REQUIRED",
]);

/**
 * What a client is told when a session (or an agent's session, or the agent tools) could not start: the
 * error itself on the unix socket; for a remote client, one error for every program that cannot start
 * (`E_SPAWN_FAILED`, {@link REMOTE_START_FAILURE}, no details). Whether a host path is missing, a
 * directory, not executable, a link, unreadable or in a directory the client cannot list, whether the
 * sandbox could not start it or its policy refused it, is the host's business: the daemon's log keeps the
 * reason. Codes about the request itself ({@link REMOTE_START_CODES}, `E_REMOTE_*`) pass as they are.
 */
export function startFailure(remote: boolean, error: unknown): unknown {
  if (!remote) return error;
  if (error instanceof SpecterError && (REMOTE_START_CODES.has(error.code) || error instanceof RemoteError)) {
    return error;
  }
  return new SpawnError("E_SPAWN_FAILED", REMOTE_START_FAILURE);
}

/**
 * Calls a remote client may make per minute of those that cost the daemon work in its own thread (an
 * attach reads up to {@link REMOTE_ATTACH_HISTORY_BYTES} of log; a snapshot serializes the screen).
 */
export const EXPENSIVE_PER_MINUTE = 120;
/** The log an attach of a remote client sends at most (older frames become an `overflow` frame). */
export const REMOTE_ATTACH_HISTORY_BYTES = 8 * 1024 * 1024;

const spent = new WeakMap<Peer, number[]>();

function spend(peer: Peer, method: string): void {
  const now = Date.now();
  const times = (spent.get(peer) ?? []).filter((at) => now - at < 60_000);
  if (times.length >= EXPENSIVE_PER_MINUTE) {
    throw new RemoteError(
      "E_REMOTE_LIMITED",
      `Too many "${method}" calls: at most ${EXPENSIVE_PER_MINUTE} a minute from a remote client`,
    );
  }
  times.push(now);
  spent.set(peer, times);
}

/** A session as `peer` is shown it: host paths (its audit log, its persistent layer) not to remote clients. */
export function seenBy(peer: Peer, entry: SessionEntry): SessionEntry {
  return peer.access.scope === "local" ? entry : { ...entry, audit: null, persist: null };
}

/** True when `peer` may see session `name`. */
export function maySee(peer: Peer, name: string): boolean {
  return peer.access.sessions === null || peer.access.sessions.has(name);
}

/** The notice of a program's exit, from its `exit` frame (with that frame's seq and time). */
export function ptyExitedOf(name: string, exit: ExitFrame, saved: SavedSession): PtyExitedFrame {
  return {
    seq: exit.seq,
    ts: exit.ts,
    type: "pty_exited",
    session_id: name,
    exit_code: exit.code,
    signal: exit.signal,
    last_lines: exit.last_lines,
    session_title: exit.session.title ?? saved.title,
    session_description: exit.session.description ?? saved.description,
    parent_agent: exit.session.parent_agent ?? saved.parent_agent,
    timed_out: exit.timed_out,
  };
}
