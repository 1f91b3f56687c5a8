/**
 * What remote clients may do, and what they are told when a program exits:
 *
 * - a *viewer* token may list sessions, attach to watch (never to control), take snapshots and detach;
 * - a *control* token may also start, drive and kill sessions and open the agent tools;
 * - a token given a list of sessions sees only those (and may start only those names);
 * - stopping the daemon is for the unix socket's peers (the user's own processes) only.
 *
 * @module
 */
import type { ExitFrame, PtyExitedFrame, SavedSession } from "../protocol/mod.ts";
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
export const LOCAL_METHODS: ReadonlySet<string> = new Set(["daemon.stop"]);

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
  const name = (params as { name?: unknown } | null)?.name;
  if (typeof name !== "string") return;
  if (sessions !== null && !sessions.has(name)) {
    throw new RemoteError("E_REMOTE_SCOPE", `This token is not given session "${name.slice(0, 64)}"`);
  }
  peer.touched.add(name.slice(0, 64));
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
