import assert from "node:assert/strict";
import {
  DaemonError,
  FileError,
  PolicyError,
  SandboxError,
  SessionError,
  SpawnError,
  SpecterError,
  UsageError,
} from "../errors.ts";
import type { SessionEntry } from "../protocol/mod.ts";
import { type Access, LOCAL_ACCESS, type Peer, RemoteError } from "../remote/mod.ts";
import { authorize, REMOTE_START_FAILURE, remoteCreate, seenBy, startFailure } from "./remote_access.ts";

function peer(access: Access): Peer {
  return {
    name: "test",
    access,
    touched: new Set(),
    greeted: true,
    agentInput: null,
    closed: false,
    unsent: 0,
    send: () => {},
    sendBytes: () => {},
    checkStall: () => {},
    closeAfterSending: () => {},
    close: () => {},
    compress: () => {},
  };
}

const control = peer({ scope: "control", sessions: null, label: "control" });
const local = peer(LOCAL_ACCESS);

Deno.test("startFailure: a remote client gets one error for every reason a program cannot start", () => {
  const reasons: unknown[] = [
    new SpawnError("E_SPAWN_NOT_FOUND", 'Program "/secret/x" was not found', { details: { program: "/x" } }),
    new SpawnError("E_SPAWN_NOT_EXECUTABLE", 'Program "/secret/y" cannot be executed'),
    new SpawnError("E_SPAWN_CWD", 'Working directory "/secret" does not exist'),
    new SpawnError("E_SPAWN", "posix_spawnp failed with errno 13"),
    new SandboxError("E_SANDBOX_START", "bwrap could not start"),
    new PolicyError([{ code: "E_POLICY_PATH_MISSING", field: "exec[0]", message: '"/secret/z" is missing' }]),
    new PolicyError([{ code: "E_POLICY_SYMLINK", field: "exec[0]", message: '"/secret/l" is a link' }]),
    new FileError("E_PATH_NOT_FOUND", '"/secret" is missing'),
    new FileError("E_FILE_TYPE", '"/secret" is a directory'),
    new SessionError("E_AUDIT", 'The audit log "/home/u/x" cannot be opened'),
    new DaemonError("E_KEEPER", 'The keeper at "/home/u/state" went away'),
    new Error("ENOENT: /secret"),
    "a string",
  ];
  const told = reasons.map((reason) => {
    const error = startFailure(true, reason);
    assert.ok(error instanceof SpecterError);
    return JSON.stringify(error.toJSON());
  });
  assert.deepEqual(
    new Set(told),
    new Set([JSON.stringify({ code: "E_SPAWN_FAILED", message: REMOTE_START_FAILURE, details: {} })]),
  );
});

Deno.test("startFailure: errors about the request pass as they are; a local client gets every error itself", () => {
  for (
    const error of [
      new DaemonError("E_SESSION_EXISTS", 'Session "a" is running'),
      new UsageError('Flag "--timeout" takes a duration'),
      new UsageError("Sandbox mode must be acknowledged", { code: "E_UNSAFE_ACK_REQUIRED" }),
      new RemoteError("E_REMOTE_SCOPE", "Not given"),
    ]
  ) {
    assert.equal(startFailure(true, error), error);
  }
  const precise = new SpawnError("E_SPAWN_NOT_FOUND", 'Program "/x" was not found');
  assert.equal(startFailure(false, precise), precise);
});

Deno.test("remoteCreate: a remote client names a preset, never a file (whatever the daemon's directory holds)", () => {
  for (const policy of ["src", "scripts", "etc", "x", "strict.json", "./strict", "/etc/passwd"]) {
    assert.throws(
      () => remoteCreate(control, { cwd: "/", flags: { policy } }),
      (error: unknown) => error instanceof RemoteError && error.code === "E_REMOTE_SCOPE",
      policy,
    );
  }
  for (const policy of ["strict", "basic", "workspace"]) {
    assert.deepEqual(remoteCreate(control, { cwd: "/home/u", flags: { policy } }), {
      cwd: "/",
      flags: { policy },
    });
  }
  const mine = { cwd: "/home/u", flags: { policy: "./my.json" } };
  assert.equal(remoteCreate(local, mine), mine);
});

Deno.test("remoteCreate: a remote client cannot widen the network (--allow-net, --ack-network)", () => {
  for (const flags of [{ "allow-net": ["example.org"] }, { "ack-network": true }]) {
    assert.throws(
      () => remoteCreate(control, { cwd: "/", flags }),
      (error: unknown) => error instanceof RemoteError && error.code === "E_REMOTE_SCOPE",
      JSON.stringify(flags),
    );
  }
});

Deno.test("seenBy: a remote client is shown no host path of a session", () => {
  const entry: SessionEntry = {
    name: "a",
    pid: 1,
    running: true,
    exit_code: null,
    signal: null,
    timed_out: false,
    duration_ms: null,
    started: 0,
    argv: ["/bin/sh"],
    title: null,
    description: null,
    parent_agent: null,
    clients: 0,
    next_seq: 0,
    log_id: null,
    persist: "/home/u/.local/state/specter/persist/a",
    audit: "/home/u/.local/state/specter/runs/r/audit.ndjson",
  };
  assert.deepEqual(seenBy(control, entry), { ...entry, persist: null, audit: null });
  assert.equal(seenBy(local, entry), entry);
});

Deno.test("authorize: stopping, the status and the listener of the daemon are for unix socket peers only", () => {
  for (const method of ["daemon.stop", "daemon.status", "daemon.listen", "daemon.revoke"]) {
    assert.throws(() => authorize(control, method, {}), (error: unknown) => {
      return error instanceof RemoteError && error.code === "E_REMOTE_SCOPE";
    }, method);
    authorize(local, method, {}); // The user's own processes: allowed.
  }
});
