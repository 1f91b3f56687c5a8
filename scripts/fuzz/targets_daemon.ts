/**
 * Fuzz targets of the daemon's and the keeper's messages:
 *
 * - `daemon_message`: a client's bytes split into lines as the unix socket splits them, each line taken
 *   as the daemon takes it (`parseRequest`), held against the client's token (`authorize`), its
 *   parameters checked (`paramsOf`), a remote client's session flags narrowed (`remoteCreate`) and, when
 *   they pass, turned into session options as the daemon does (`sessionOptions`). Oracle: only the
 *   documented errors; a request and checked parameters round-trip; a viewer never gets past `authorize`
 *   with a control method, a token given sessions never with another name, and a remote client's session
 *   always runs in the bwrap sandbox under a preset.
 * - `keeper_message`: packets between daemon and keeper (`decodeKeeperRequest`, `decodeKeeperEvent`, the
 *   error a keeper's `error` event becomes) and the control data of descriptor passing (`controlFds`, the
 *   `cmsghdr` walk on the bytes the kernel filled). Oracle: round trips, error codes from the table only,
 *   and descriptors read only from whole `SCM_RIGHTS` messages inside the control length.
 *
 * @module
 */
import { isDeepStrictEqual } from "node:util";
import { SpecterError } from "../../src/errors.ts";
import { DriverLineSplitter } from "../../src/frames/mod.ts";
import {
  authorize,
  LOCAL_METHODS,
  REMOTE_CREATE_FLAGS,
  remoteCreate,
  VIEWER_METHODS,
} from "../../src/daemon/remote_access.ts";
import {
  type CheckedMethod,
  METHOD_PARAMS,
  paramsOf,
  parseRequest,
  RpcError,
} from "../../src/daemon/request.ts";
import { sessionOptions } from "../../src/cli/flags.ts";
import type { Access, Peer } from "../../src/remote/mod.ts";
import { decodeKeeperRequest } from "../../src/keeper/messages.ts";
import { KeeperRequestSchema } from "../../src/protocol/mod.ts";
import { decodeKeeperEvent, keeperFailure } from "../../src/daemon/keeper_events.ts";
import { controlFds } from "../../src/pty/fd_passing.ts";
import { ERROR_CODES } from "../../src/errors.ts";
import { Crash, expectTyped, type FuzzTarget, generateJsonish } from "./_common.ts";
import { bytesOf, mutateBytes, randomByteString } from "./_bytes.ts";
import { mutateValue } from "./_mutate.ts";
import type { Prng } from "./_prng.ts";

/**
 * `value` as it reads back once sent as JSON: what a round trip is compared with (-0 becomes 0, and numbers
 * JSON cannot hold become null; equality by `Object.is` tells -0 from 0).
 */
function asJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

// --- daemon_message ----------------------------------------------------------------------------------

const rpc = (method: string, params?: unknown, id: unknown = 1) => ({
  jsonrpc: "2.0",
  ...(id === undefined ? {} : { id }),
  method,
  ...(params === undefined ? {} : { params }),
});
const DAEMON_CORPUS: readonly unknown[] = [
  rpc("daemon.hello", { protocol: 1 }),
  rpc("daemon.hello", { protocol: 1, compress: "zstd" }, "h"),
  rpc("session.create", { name: "a", argv: ["bash"], cwd: "/home/u", flags: {} }),
  rpc("session.create", {
    name: "b.1",
    argv: ["sh", "-c", "echo hi"],
    cwd: "/home/u/p",
    flags: { policy: "workspace", sandbox: "bwrap", env: ["A=1"], cols: "100", timeout: "5s" },
    if_exists: "reuse",
    author_kind: "agent",
    author: "bot",
    attach: true,
    persist: true,
  }),
  rpc("session.create", {
    name: "c",
    argv: ["x"],
    cwd: "/",
    flags: { sandbox: "none", "unsafe-no-sandbox": true },
  }),
  rpc("session.create", { name: "d", argv: ["x"], cwd: "/", flags: { policy: "./permissive.toml" } }),
  rpc("session.create", {
    name: "e",
    argv: ["x"],
    cwd: "/",
    flags: { "ack-network": true, "strict-write": true },
  }),
  rpc("session.create", {
    name: "f",
    argv: ["x"],
    cwd: "/",
    flags: { "prompt-regex": ["(a+)+$"], record: "/tmp/r" },
  }),
  rpc("session.list", undefined, 7),
  rpc("session.attach", { name: "a", from: 0, log_id: "x", control: true }),
  rpc("session.attach", { name: "b.1" }, null),
  rpc("session.detach", { name: "a" }),
  rpc("session.send", { name: "a", message: { v: 1, type: "input", data: "ls\r" } }),
  rpc("session.send", { name: "a", message: { v: 1, type: "resize", cols: 1000, rows: 500 } }),
  rpc("session.screen", { name: "a" }),
  rpc("session.kill", { name: "a", purge: true }),
  rpc("agent.open", { cwd: "/home/u", flags: { policy: "basic" } }),
  rpc("daemon.stop", { kill_sessions: true }),
  rpc("no.such", [1, 2]),
  rpc("session.list", undefined, undefined),
];
const DAEMON_TEXTS = DAEMON_CORPUS.map((v) => JSON.stringify(v));
const DAEMON_TOKENS = [
  '"jsonrpc":"2.0"',
  '"method":"session.create"',
  '"method":"daemon.stop"',
  '"params":',
  '"name":"a"',
  '"name":"../x"',
  '"flags":{"sandbox":"none"}',
  '"policy":"strict"',
  '"policy":"default"',
  '"__proto__":',
  '"constructor":',
  "\\u0000",
  "\n",
  "[",
  "{",
  "}",
  "1e999",
];

/** The clients a line can come from: the unix socket's peer, and tokens of each kind. */
const ACCESS: readonly Access[] = [
  { scope: "local", sessions: null, label: "unix socket" },
  { scope: "viewer", sessions: null, label: "viewer" },
  { scope: "control", sessions: null, label: "control" },
  { scope: "control", sessions: new Set(["a", "b.1"]), label: "control of a and b.1" },
  { scope: "viewer", sessions: new Set(["a"]), label: "viewer of a" },
];

function peerWith(access: Access): Peer {
  const fail = (): never => {
    throw new Crash("The validation layer used the connection");
  };
  return {
    name: "fuzz",
    access,
    touched: new Set(),
    greeted: true,
    agentInput: null,
    closed: false,
    unsent: 0,
    send: fail,
    sendBytes: fail,
    checkStall: fail,
    closeAfterSending: fail,
    close: fail,
    compress: fail,
  };
}

/** One line as the daemon validates it, from a client with `access`. */
function validateLine(line: string, access: Access): void {
  const request = expectTyped(() => parseRequest(line), ["E_DAEMON_PEER"]);
  if (request === undefined) return;
  // Sent on as JSON, it reads back the same (numbers JSON cannot hold, such as 1e999, become null).
  const text = JSON.stringify(request);
  if (!isDeepStrictEqual(parseRequest(text), JSON.parse(text))) {
    throw new Crash("A request does not round-trip");
  }
  const method = request.method;
  const params = request.params ?? {};
  const peer = peerWith(access);
  let allowed = true;
  try {
    authorize(peer, method, params);
  } catch (error: unknown) {
    if (!(error instanceof SpecterError) || !["E_REMOTE_SCOPE", "E_REMOTE_LIMITED"].includes(error.code)) {
      throw error;
    }
    allowed = false;
  }
  const remote = access.scope !== "local";
  const name = (params as { name?: unknown } | null)?.name;
  if (allowed) {
    if (remote && LOCAL_METHODS.has(method)) throw new Crash(`A remote client may call "${method}"`);
    if (access.scope === "viewer" && !VIEWER_METHODS.has(method)) {
      throw new Crash(`A viewer may call "${method}"`);
    }
    if (access.sessions !== null && typeof name === "string" && !access.sessions.has(name)) {
      throw new Crash(`A token not given "${name}" may name it`);
    }
  } else if (!remote) throw new Crash("The unix socket's peer was refused");
  if (!allowed || !Object.hasOwn(METHOD_PARAMS, method)) return;
  let checked: unknown;
  try {
    checked = paramsOf(method as CheckedMethod, params);
  } catch (error: unknown) {
    if (error instanceof RpcError && error.code === -32602) return;
    throw error;
  }
  const sent = asJson(checked);
  if (!isDeepStrictEqual(paramsOf(method as CheckedMethod, sent), sent)) {
    throw new Crash(`Checked parameters of "${method}" do not check the same again`);
  }
  if (method !== "session.create" && method !== "agent.open") return;
  const create = expectTyped(
    () => remoteCreate(peer, checked as { cwd: string; flags: Record<string, string | boolean | string[]> }),
    ["E_REMOTE_SCOPE"],
  );
  if (create === undefined || !remote) return;
  if (create.cwd !== "/") throw new Crash("A remote client's directory was kept");
  for (const [flag, value] of Object.entries(create.flags)) {
    if (value !== false && !REMOTE_CREATE_FLAGS.has(flag)) {
      throw new Crash(`A remote client may give --${flag}`);
    }
  }
  // As the daemon resolves a session's options: the sandbox must be bwrap, under a preset.
  let options;
  try {
    options = sessionOptions({ ...create.flags, cwd: create.cwd }, ["true"]);
  } catch (error: unknown) {
    if (error instanceof SpecterError) return;
    throw error;
  }
  const sandbox = options.sandbox;
  if (sandbox === undefined || (sandbox.mode !== "auto" && sandbox.mode !== "bwrap")) {
    throw new Crash(`A remote client's session runs with sandbox ${JSON.stringify(sandbox?.mode)}`);
  }
  if (!sandbox.policy.source.startsWith("preset:") || sandbox.strictWrite) {
    throw new Crash(`A remote client's session runs under policy "${sandbox.policy.source}"`);
  }
}

const encoder = new TextEncoder();

/** A client's line: mostly a well-formed request whose parameters are mutated (what gets past the envelope). */
function daemonLine(rng: Prng): string {
  if (rng.chance(0.4)) return generateJsonish(rng, DAEMON_CORPUS, DAEMON_TEXTS, DAEMON_TOKENS);
  const request = structuredClone(rng.pick(DAEMON_CORPUS)) as { params?: unknown };
  if (request.params !== undefined) {
    for (let n = 1 + rng.below(3); n > 0; n--) request.params = mutateValue(rng, request.params);
  }
  return JSON.stringify(request);
}

const daemonMessage: FuzzTarget = {
  name: "daemon_message",
  about: "a client's lines as the daemon validates them (parseRequest, authorize, paramsOf, remoteCreate)",
  generate(rng) {
    const lines: string[] = [];
    for (let n = rng.chance(0.8) ? 1 : 2 + rng.below(3); n > 0; n--) lines.push(daemonLine(rng));
    return `${rng.below(ACCESS.length)} ${rng.below(64)}\n${lines.join("\n")}`;
  },
  run(input) {
    const newline = input.indexOf("\n");
    const [which, cut] = input.slice(0, newline).split(" ").map(Number) as [number, number];
    const text = input.slice(newline + 1);
    // The unix socket's splitter, fed in two pieces: the same lines as the text has, wherever it is cut.
    const bytes = encoder.encode(text);
    const splitter = new DriverLineSplitter(1024 * 1024);
    const at = Math.min(bytes.length, cut * 5);
    const results = [
      ...splitter.push(bytes.subarray(0, at)),
      ...splitter.push(bytes.subarray(at)),
      ...splitter.end(),
    ];
    const expected = new TextDecoder().decode(bytes).split("\n").filter((line, i, all) =>
      i < all.length - 1 || line !== ""
    );
    const got = results.map((r) => ("line" in r ? r.line : null));
    if (got.length !== expected.length) {
      throw new Crash(`${got.length} lines split, expected ${expected.length}`);
    }
    for (const [i, line] of got.entries()) {
      // A line that is not UTF-8 text is refused by the splitter (its error goes to the client).
      if (line !== null && line !== expected[i]) {
        throw new Crash(`Line ${i} split as ${JSON.stringify(line)}`);
      }
      if (line !== null) validateLine(line, ACCESS[which]!);
    }
  },
};

// --- keeper_message ----------------------------------------------------------------------------------

const KEEPER_CORPUS: readonly unknown[] = [
  {
    op: "spawn",
    id: "s1",
    argv: ["bwrap", "--die-with-parent", "bash"],
    env: { PATH: "/usr/bin", TERM: "xterm-256color" },
    cwd: "/",
    cols: 80,
    rows: 24,
    tty: true,
    targets: [3, 4],
  },
  { op: "spawn", id: "s2", argv: ["x"], argv0: "-x", env: {}, cols: 1, rows: 1, tty: false, targets: [] },
  { op: "resume", id: "s1", from: 1024 },
  { op: "ack", id: "s1", offset: 4096 },
  { op: "release", id: "s1" },
  {
    op: "kept",
    session: { id: "s1", pid: 10, tty_path: "/dev/pts/3", status: null, held_from: 0, read_to: 9 },
  },
  { op: "hello", pid: 99, count: 1 },
  { op: "spawned", id: "s1", pid: 10, tty_path: "/dev/pts/3" },
  { op: "resumed", id: "s1", pid: 10, tty_path: "/dev/pts/3" },
  { op: "exited", id: "s1", pid: 10, status: 256 },
  { op: "error", id: "s1", code: "E_SPAWN_NOT_FOUND", message: "No such program" },
  { op: "error", code: "E_PROTOCOL", message: "The keeper got a malformed message" },
];
const KEEPER_TEXTS = KEEPER_CORPUS.map((v) => JSON.stringify(v));
const KEEPER_TOKENS = [
  '"op":"spawn"',
  '"op":"error"',
  '"code":"toString"',
  '"code":"__proto__"',
  '"code":"constructor"',
  '"code":"hasOwnProperty"',
  '"code":"E_KEEPER"',
  '"targets":[2]',
  '"id":',
  "\\ud800",
  "{",
  "}",
];

/** Codes an `error` event may carry: the table's, others, and names every object has. */
const ERROR_NAMES = [
  "E_KEEPER",
  "E_SPAWN_NOT_FOUND",
  "E_PROTOCOL",
  "E_NOPE",
  "",
  "toString",
  "constructor",
  "__proto__",
  "hasOwnProperty",
  "valueOf",
];

const SOL_SOCKET = 1;
const SCM_RIGHTS = 1;

/** A control buffer as `receiveFds` allocates it, with `cmsghdr`s written into it, and its length. */
function controlCase(rng: Prng): string {
  const maxFds = rng.pick([8, 32]);
  const buffer = new Uint8Array(16 + ((4 * maxFds + 7) & ~7));
  const view = new DataView(buffer.buffer);
  let at = 0;
  for (let n = 1 + rng.below(3); n > 0 && at + 16 <= buffer.length; n--) {
    const fds = rng.below(maxFds + 1);
    const exact = 16 + 4 * fds;
    const length = rng.chance(0.7) ? exact : rng.pick([
      0,
      15,
      16,
      exact + 1 + rng.below(7),
      exact - 1 - rng.below(3),
      buffer.length - at,
      buffer.length - at + 1 + rng.below(64),
      2 ** 32,
      2 ** 32 + 16,
      2 ** 33 - 8,
      2 ** 53,
      rng.u32(),
    ]);
    view.setBigUint64(at, BigInt(Math.min(length, Number.MAX_SAFE_INTEGER)), true);
    view.setInt32(at + 8, rng.chance(0.85) ? SOL_SOCKET : rng.pick([0, 41, rng.u32() | 0]), true);
    view.setInt32(at + 12, rng.chance(0.85) ? SCM_RIGHTS : rng.pick([2, 3, rng.u32() | 0]), true);
    for (let i = 0; i < fds && at + 16 + 4 * i + 4 <= buffer.length; i++) {
      view.setInt32(at + 16 + 4 * i, rng.chance(0.9) ? 3 + rng.below(1000) : rng.u32() | 0, true);
    }
    at += (Math.min(length, exact) + 7) & ~7;
    if (length < 16) break;
  }
  const filled = Math.min(at, buffer.length);
  const controlLength = rng.chance(0.8) ? filled : rng.pick([
    0,
    15,
    16,
    filled + 1 + rng.below(16),
    buffer.length,
    buffer.length + 8,
    2 ** 31,
    rng.below(filled + 1),
  ]);
  let bytes = "";
  for (const b of buffer) bytes += String.fromCharCode(b);
  if (rng.chance(0.2)) bytes = mutateBytes(rng, bytes).slice(0, buffer.length).padEnd(buffer.length, "\0");
  return `cmsg ${controlLength}\n${bytes}`;
}

/** The `SCM_RIGHTS` descriptors a `cmsghdr` walk may read: only whole messages inside the length. */
function referenceFds(control: Uint8Array, controlLength: number): number[] {
  const end = Math.min(controlLength, control.length);
  const view = new DataView(control.buffer, control.byteOffset, control.byteLength);
  const out: number[] = [];
  for (let at = 0; at + 16 <= end;) {
    const length = Number(view.getBigUint64(at, true));
    if (length < 16 || length > end - at) break;
    if (view.getInt32(at + 8, true) === SOL_SOCKET && view.getInt32(at + 12, true) === SCM_RIGHTS) {
      for (let i = 0; i < Math.floor((length - 16) / 4); i++) out.push(view.getInt32(at + 16 + 4 * i, true));
    }
    at += Math.ceil(length / 8) * 8;
  }
  return out;
}

const keeperMessage: FuzzTarget = {
  name: "keeper_message",
  about:
    "keeper packets both ways (decodeKeeperRequest, decodeKeeperEvent, keeperFailure) and cmsg control data",
  generate(rng) {
    const roll = rng.below(10);
    if (roll < 3) return controlCase(rng);
    const kind = roll < 6 ? "req" : "evt";
    const text = kind === "evt" && rng.chance(0.2)
      ? JSON.stringify({ op: "error", id: "s1", code: rng.pick(ERROR_NAMES), message: "m" })
      : generateJsonish(rng, KEEPER_CORPUS, KEEPER_TEXTS, KEEPER_TOKENS);
    // Packets are bytes: sometimes not UTF-8 at all.
    const bytes = rng.chance(0.1)
      ? mutateBytes(rng, text)
      : rng.chance(0.05)
      ? randomByteString(rng, 64)
      : null;
    return bytes === null ? `${kind}\n${text}` : `${kind} bytes\n${bytes}`;
  },
  run(input) {
    const newline = input.indexOf("\n");
    const [kind, extra] = input.slice(0, newline).split(" ") as [string, string | undefined];
    const body = input.slice(newline + 1);
    if (kind === "cmsg") {
      const control = bytesOf(body);
      const controlLength = Number(extra);
      const fds = controlFds(control, controlLength);
      const want = referenceFds(control, controlLength);
      if (!isDeepStrictEqual(fds, want)) {
        throw new Crash(
          `controlFds read ${JSON.stringify(fds)}, whole messages hold ${JSON.stringify(want)}`,
        );
      }
      return;
    }
    const payload = extra === "bytes" ? bytesOf(body) : encoder.encode(body);
    if (kind === "req") {
      const decoded = decodeKeeperRequest(payload);
      // The keeper's check is generated from the schema's JSON Schema: it must agree with zod on every input.
      // (A "__proto__" key is the one exception: zod drops it, the keeper refuses the message.)
      let json: unknown = undefined;
      let protoKey = false;
      try {
        json = JSON.parse(new TextDecoder().decode(payload), (key, value) => {
          if (key === "__proto__") protoKey = true;
          return value;
        });
      } catch {
        // Not JSON: both refuse it (checked below).
      }
      const zodTakes = json !== undefined && !protoKey && KeeperRequestSchema.safeParse(json).success;
      if (zodTakes !== ("request" in decoded)) {
        throw new Crash(`The keeper's request check and KeeperRequestSchema disagree (zod: ${zodTakes})`);
      }
      if ("request" in decoded) {
        const again = decodeKeeperRequest(encoder.encode(JSON.stringify(decoded.request)));
        if (!("request" in again) || !isDeepStrictEqual(again.request, asJson(decoded.request))) {
          throw new Crash("A keeper request does not round-trip");
        }
        if (decoded.request.op === "spawn" && decoded.request.targets.some((t) => t < 3)) {
          throw new Crash("A spawn may place a descriptor on 0, 1 or 2");
        }
      } else if (decoded.refusal.op !== "error" || decoded.refusal.code !== "E_PROTOCOL") {
        throw new Crash("A malformed request was not refused with E_PROTOCOL");
      }
      return;
    }
    const event = decodeKeeperEvent(payload);
    if (event === null) return;
    if (!isDeepStrictEqual(decodeKeeperEvent(encoder.encode(JSON.stringify(event))), asJson(event))) {
      throw new Crash("A keeper event does not round-trip");
    }
    if (event.op === "error") {
      const error = keeperFailure(event);
      if (!(error instanceof SpecterError) || !Object.hasOwn(ERROR_CODES, error.code)) {
        throw new Crash(`A keeper error became code ${JSON.stringify(error.code)}, not one of the table`);
      }
    }
  },
};

/** The targets of this file. */
export const DAEMON_TARGETS: readonly FuzzTarget[] = [daemonMessage, keeperMessage];
