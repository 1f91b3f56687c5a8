/**
 * Typed errors with stable codes. Every failure Specter reports carries one of the codes in
 * {@link ERROR_CODES}; the code is the contract, the message is for people.
 *
 * @module
 */

/** Every stable error code, with a one-line meaning. Codes are never renamed or reused. */
export const ERROR_CODES = {
  E_USAGE: "The command line is malformed (unknown flag, missing value, bad duration or size)",
  E_UNSAFE_ACK_REQUIRED: "An unsafe mode was asked for without the flag that acknowledges it",
  E_PLATFORM_UNSUPPORTED: "This OS/architecture pair has no constants table",
  E_FFI: "libc could not be loaded or a symbol is missing",
  E_FD_PASSING:
    "Descriptors could not be passed over a unix socket (sendmsg/recvmsg failed, more than 253 at once, or some were cut off)",
  E_PTY_OPEN: "openpty() or a follow-up fcntl() on the new terminal failed",
  E_SPAWN: "posix_spawn() failed for a reason other than the ones below",
  E_SPAWN_NOT_FOUND: "The program was not found on the child's PATH",
  E_SPAWN_NOT_EXECUTABLE: "The program exists but cannot be executed",
  E_SPAWN_CWD:
    "The working directory is not absolute or does not exist, or (an agent's workdir) is not a directory or not visible under the policy",
  E_SPAWN_FAILED:
    "The program could not be started: what a remote client is told of any program that cannot start (the daemon's log says why)",
  E_SESSION_CLOSED: "The session has already ended",
  E_SESSION_UNKNOWN:
    "No session has that id (agent tools) or name (attach, send, kill, logs): it never existed, was closed or was pruned",
  E_SESSION_LIMIT:
    "Every session the agent tools may hold is in use (a call in progress on it, or recently used): none may be pruned for a new one",
  E_DAEMON_UNAVAILABLE:
    "No daemon answers on the socket and none may be started (`--no-autostart`), or the one started did not come up",
  E_DAEMON_LOCKED:
    "Another daemon already holds this state directory or socket (one daemon per user and state directory)",
  E_DAEMON_PEER:
    "A socket peer was refused: it runs as another user (kernel peer credentials), or spoke garbage or a wrong protocol version",
  E_DAEMON_UNTRUSTED:
    "The daemon's socket or state is not this user's own (owner, group/other access, symlink) or is served by another uid: refused before a byte is sent",
  E_KEEPER:
    "The keeper (which holds the sessions' terminals) could not be started, reached, or died; its sessions are reported ended",
  E_LOG_WRITE:
    "A session's frame log could not be written (disk full, I/O error): logging stopped, the session goes on",
  E_LOG_CORRUPT:
    "A frame log segment is damaged: it was reported and skipped (a torn last record is cut on recovery without this error)",
  E_LOG_SEEK:
    "A frame log has no frame at that seq any more (removed by rotation), or the log id does not match",
  E_SESSION_EXISTS: "A named session with that name already runs in the daemon",
  E_REMOTE_BIND:
    "The daemon's TCP listener cannot start: a non-loopback address without TLS or --insecure-bind, an unreadable certificate or key, or the address in use",
  E_REMOTE_TOKEN_FILE:
    "--token-file is not a regular file of mode 0600 (or stricter) holding one token or a valid token list",
  E_REMOTE_AUTH: "A TCP/WebSocket client presented no token or a wrong one (HTTP 401)",
  E_REMOTE_ORIGIN:
    "A browser request came from another site's page (its Origin is not this viewer's; HTTP 403)",
  E_REMOTE_HOST:
    "A request named a Host the daemon does not answer to (DNS rebinding; HTTP 403); --allow-host adds one",
  E_REMOTE_SCOPE:
    "The client's token does not allow this: a viewer token tried to drive a session, or a token tried a session it is not given",
  E_REMOTE_LIMITED:
    "Too many failed attempts from this peer: refused for a while without looking at the token (HTTP 429)",
  E_REMOTE_BUSY: "The daemon serves as many remote clients as it allows (--max-clients; HTTP 503)",
  E_REMOTE_NONE:
    "The daemon has no TCP listener, so there is no web viewer address (give it one: specter daemon listen)",
  E_EXPECT_TIMEOUT:
    "A wait for output (the SDK's expect) did not match within its timeout; the session goes on",
  E_PROTOCOL: "A driver message is not valid JSON, has an unknown type or invalid fields",
  E_PROTOCOL_VERSION: "A driver message has a missing or unsupported protocol version `v`",
  E_PROTOCOL_LINE_TOO_LONG:
    "A driver line is longer than the cap (1 MiB): it is discarded up to its newline, the session goes on",
  E_PROTOCOL_UTF8: "A driver line is not valid UTF-8",
  E_PROTOCOL_BASE64: "The `data` of a binary `input` message is not valid base64",
  E_RESIZE_RANGE: "A driver resize asks for fewer than 1 or more than 1000 columns or 500 rows",
  E_STDOUT_CLOSED:
    "Nobody reads the frames any more (stdout is a closed pipe): the program was stopped, the audit log and artifacts are still written",
  E_RECORD: "The recording file could not be written",
  E_IO: "Writing frames or reading driver input failed",
  E_POLICY_NOT_FOUND: "The policy is neither a known preset nor a readable file",
  E_POLICY_PARSE: "The policy file is not valid JSON or TOML",
  E_POLICY_VERSION: "The policy's `version` is missing or unsupported",
  E_POLICY_UNKNOWN_KEY: "The policy has a key Specter does not know (never ignored)",
  E_POLICY_SCHEMA: "A policy field has the wrong type or value",
  E_POLICY_PATH_RELATIVE: "A policy path (or the cwd) is not absolute",
  E_POLICY_PATH_DOTDOT: "A policy path (or the cwd) is not normalized (contains `..`, `.` or `//`)",
  E_POLICY_BROAD_ROOT: "A policy path is a broad root such as `/`, the home directory, `/usr` or `/etc`",
  E_POLICY_WRITE_ACK: "Host writes were allowed without --ack-unsafe-write",
  E_POLICY_NETWORK_ACK: "Network was allowed without --ack-network",
  E_POLICY_SOCKET_ACK: "Host unix sockets (fs.sockets) were granted without --ack-host-sockets",
  E_POLICY_NET_RULE:
    "A network allow-list rule (policy network.allow or --allow-net) is malformed, too broad (`*`, `*.com`) or an address range",
  E_POLICY_NET_EMPTY: 'A network allow list is empty (a policy without network says `"network": "off"`)',
  E_POLICY_SYMLINK:
    "A policy path (or the program) passes through a symlink that root did not make; name the real path instead",
  E_POLICY_PATH_MISSING:
    "A write grant, a granted socket, the program, or a read/exec entry inside a write grant does not exist",
  E_POLICY_ARTIFACTS_EXPOSED:
    "A grant would make the run's artifacts directory (audit log, recording, snapshots) writable or visible inside the sandbox",
  E_POLICY_SELF_WRITABLE:
    "A write grant contains the policy file itself: the program could rewrite the policy of its next run",
  E_POLICY_PROTECT_LIMIT:
    "Strict-write could not check every protected name under a write grant (walk cap on entries, depth, names or time, or an unlistable directory)",
  E_SANDBOX_UNAVAILABLE: "The requested sandbox backend cannot run here (the message says how to fix it)",
  E_SANDBOX_START: "The sandbox backend failed to start the program",
  E_SANDBOX_MOUNTS:
    "The sandbox's mount table did not match the launch plan (a writable mount outside the grants, or a bind that landed elsewhere); the program never ran",
  E_SANDBOX_NETWORK:
    "The sandbox's network could not be bridged to Specter's proxy (nsenter missing, or the relay did not start); the program never ran",
  E_SCENARIO_PARSE: "The scenario file is not valid YAML or JSON",
  E_TERMINAL_PARSE:
    "The program wrote output that is not valid UTF-8 (in a scenario that does not allow binary output)",
  E_SCENARIO_SCHEMA: "The scenario has an unknown key or a field with the wrong type or value",
  E_REPLAY_BUNDLE: "The directory is not a scenario bundle (scenario.resolved.json missing or invalid)",
  E_REPLAY_CHECKSUM:
    "No longer raised (since checksums are checked by default): see E_REPLAY_TAMPERED and E_REPLAY_INCOMPLETE",
  E_REPLAY_EVENTS: "events.ndjson is empty or holds a line that is not a valid frame",
  E_REPLAY_INCOMPLETE:
    "A file a replay requires is missing from the bundle (policy.effective.json, checksums.json, events.ndjson)",
  E_REPLAY_TAMPERED:
    "A bundle file was altered, removed or added since the run (it does not match checksums.json)",
  E_REPLAY_NORMALIZE:
    "A redaction regex ran past its deadline while a replay normalized output (a backtracking pattern); nothing was compared",
  E_REPLAY_RUN: "The replayed run could not be carried out although the recorded one was (e.g. a file moved)",
  E_PATH_SYMLINK: "A path is, or passes through, a symlink where none may be followed",
  E_PATH_ESCAPE: "A path is absolute, contains `..`, or leaves the directory it must stay beneath",
  E_PATH_NOT_FOUND: "A path that must exist does not",
  E_FILE_TYPE:
    "A file is not of the type required (a FIFO, device, socket or directory where a regular file is read)",
  E_FILE_TOO_LARGE: "A file is larger than the cap for its kind",
  E_FILE_READ: "A file could not be opened or read (permission or I/O error)",
  E_FILE_UNSUPPORTED: "Descriptor-based path resolution is not available on this platform",
  E_FILE_WRITE:
    "A file could not be written whole (disk full, quota, permission); no partial file or line is left",
  E_AUDIT:
    "The audit log could not be written (disk full, permission): it holds whole records up to the failure",
  E_ARTIFACTS:
    "A file of the artifacts bundle could not be written (disk full, permission); the result still reaches stdout",
  E_AUDIT_TAMPERED:
    "An audit log's hash chain is broken (a record edited, removed, reordered, inserted or torn): the first bad record is named",
} as const;

/** A stable error code. */
export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * The release each code first appeared in (from the history of this file). A new code gets the version
 * that will first ship it; the data model (`spec/data-model.md`) lists it.
 */
export const ERROR_CODE_SINCE: Readonly<Record<ErrorCode, string>> = {
  E_USAGE: "0.1.0",
  E_UNSAFE_ACK_REQUIRED: "0.1.0",
  E_PLATFORM_UNSUPPORTED: "0.1.0",
  E_FFI: "0.1.0",
  E_FD_PASSING: "0.7.0",
  E_PTY_OPEN: "0.1.0",
  E_SPAWN: "0.1.0",
  E_SPAWN_NOT_FOUND: "0.1.0",
  E_SPAWN_NOT_EXECUTABLE: "0.1.0",
  E_SPAWN_CWD: "0.1.0",
  E_SPAWN_FAILED: "0.8.0",
  E_SESSION_CLOSED: "0.1.0",
  E_SESSION_UNKNOWN: "0.7.0",
  E_SESSION_LIMIT: "0.8.0",
  E_EXPECT_TIMEOUT: "0.7.0",
  E_DAEMON_UNAVAILABLE: "0.7.0",
  E_DAEMON_LOCKED: "0.7.0",
  E_DAEMON_PEER: "0.7.0",
  E_DAEMON_UNTRUSTED: "0.8.0",
  E_KEEPER: "0.7.0",
  E_LOG_WRITE: "0.7.0",
  E_LOG_CORRUPT: "0.7.0",
  E_LOG_SEEK: "0.7.0",
  E_SESSION_EXISTS: "0.7.0",
  E_REMOTE_BIND: "0.8.0",
  E_REMOTE_TOKEN_FILE: "0.8.0",
  E_REMOTE_AUTH: "0.8.0",
  E_REMOTE_ORIGIN: "0.8.0",
  E_REMOTE_HOST: "0.8.0",
  E_REMOTE_SCOPE: "0.8.0",
  E_REMOTE_LIMITED: "0.8.0",
  E_REMOTE_BUSY: "0.8.0",
  E_REMOTE_NONE: "0.8.0",
  E_PROTOCOL: "0.1.0",
  E_PROTOCOL_VERSION: "0.1.0",
  E_RECORD: "0.1.0",
  E_IO: "0.1.0",
  E_POLICY_NOT_FOUND: "0.2.0",
  E_POLICY_PARSE: "0.2.0",
  E_POLICY_VERSION: "0.2.0",
  E_POLICY_UNKNOWN_KEY: "0.2.0",
  E_POLICY_SCHEMA: "0.2.0",
  E_POLICY_PATH_RELATIVE: "0.2.0",
  E_POLICY_PATH_DOTDOT: "0.2.0",
  E_POLICY_BROAD_ROOT: "0.2.0",
  E_POLICY_WRITE_ACK: "0.2.0",
  E_POLICY_NETWORK_ACK: "0.2.0",
  E_SANDBOX_UNAVAILABLE: "0.2.0",
  E_SANDBOX_START: "0.2.0",
  E_SCENARIO_PARSE: "0.4.0",
  E_TERMINAL_PARSE: "0.4.0",
  E_SCENARIO_SCHEMA: "0.4.0",
  E_REPLAY_BUNDLE: "0.4.0",
  E_REPLAY_CHECKSUM: "0.4.0",
  E_REPLAY_EVENTS: "0.4.0",
  E_REPLAY_RUN: "0.4.0",
  E_PROTOCOL_LINE_TOO_LONG: "0.6.0",
  E_PROTOCOL_UTF8: "0.6.0",
  E_PROTOCOL_BASE64: "0.6.0",
  E_RESIZE_RANGE: "0.6.0",
  E_STDOUT_CLOSED: "0.6.0",
  E_POLICY_SOCKET_ACK: "0.6.0",
  E_POLICY_SYMLINK: "0.6.0",
  E_POLICY_PATH_MISSING: "0.6.0",
  E_POLICY_ARTIFACTS_EXPOSED: "0.6.0",
  E_POLICY_SELF_WRITABLE: "0.8.0",
  E_POLICY_NET_RULE: "0.8.0",
  E_POLICY_NET_EMPTY: "0.8.0",
  E_POLICY_PROTECT_LIMIT: "0.6.0",
  E_SANDBOX_MOUNTS: "0.6.0",
  E_SANDBOX_NETWORK: "0.8.0",
  E_REPLAY_INCOMPLETE: "0.6.0",
  E_REPLAY_TAMPERED: "0.6.0",
  E_REPLAY_NORMALIZE: "0.6.0",
  E_PATH_SYMLINK: "0.6.0",
  E_PATH_ESCAPE: "0.6.0",
  E_PATH_NOT_FOUND: "0.6.0",
  E_FILE_TYPE: "0.6.0",
  E_FILE_TOO_LARGE: "0.6.0",
  E_FILE_READ: "0.6.0",
  E_FILE_UNSUPPORTED: "0.6.0",
  E_FILE_WRITE: "0.6.0",
  E_AUDIT: "0.6.0",
  E_ARTIFACTS: "0.6.0",
  E_AUDIT_TAMPERED: "0.6.0",
};

/** Structured, JSON-safe details attached to an error (never secrets such as env values). */
export type ErrorDetails = Readonly<Record<string, string | number | boolean | null | readonly string[]>>;

/** Options accepted by every Specter error constructor. */
export interface SpecterErrorOptions {
  /** The lower-level error this one wraps. */
  cause?: unknown;
  /** Structured fields, e.g. `{ errno: 2, path: "/nope" }`. */
  details?: ErrorDetails;
}

/** Base class of every error Specter throws on purpose. */
export class SpecterError extends Error {
  /** The stable code, e.g. `E_SPAWN_NOT_FOUND`. */
  readonly code: ErrorCode;
  /** Structured fields for machines; empty when there are none. */
  readonly details: ErrorDetails;

  /** Creates an error with a stable `code` and a sentence-case message without a trailing period. */
  constructor(code: ErrorCode, message: string, options: SpecterErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SpecterError";
    this.code = code;
    this.details = options.details ?? {};
  }

  /** The JSON form used in `error` frames and `exec` results. */
  toJSON(): { code: ErrorCode; message: string; details: ErrorDetails } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

/** The command line or an option object is invalid. */
export class UsageError extends SpecterError {
  /** Creates an `E_USAGE` (or `E_UNSAFE_ACK_REQUIRED`) error. */
  constructor(
    message: string,
    options: SpecterErrorOptions & { code?: "E_USAGE" | "E_UNSAFE_ACK_REQUIRED" } = {},
  ) {
    super(options.code ?? "E_USAGE", message, options);
    this.name = "UsageError";
  }
}

/** Opening the terminal or starting the program failed. */
export class SpawnError extends SpecterError {
  /** Creates a spawn-related error (`E_PTY_OPEN`, `E_SPAWN*`, `E_FFI`, `E_FD_PASSING`, `E_PLATFORM_UNSUPPORTED`). */
  constructor(
    code:
      | "E_PTY_OPEN"
      | "E_FD_PASSING"
      | "E_SPAWN"
      | "E_SPAWN_NOT_FOUND"
      | "E_SPAWN_NOT_EXECUTABLE"
      | "E_SPAWN_CWD"
      | "E_SPAWN_FAILED"
      | "E_FFI"
      | "E_PLATFORM_UNSUPPORTED",
    message: string,
    options: SpecterErrorOptions = {},
  ) {
    super(code, message, options);
    this.name = "SpawnError";
  }
}

/** One problem found in a policy: its code, the field it concerns (e.g. `fs.write[0]`) and a message. */
export interface PolicyProblem {
  /**
   * Stable code, e.g. `E_POLICY_BROAD_ROOT`; a policy file that is not a bounded regular file has the
   * file's own code (`E_FILE_TYPE`, `E_FILE_TOO_LARGE`, `E_FILE_READ`).
   */
  readonly code: PolicyErrorCode | "E_FILE_TYPE" | "E_FILE_TOO_LARGE" | "E_FILE_READ";
  /** Dotted path of the field, e.g. `fs.write[0]`; `(policy)` for the whole document. */
  readonly field: string;
  /** Sentence-case message naming the field and value, no trailing period. */
  readonly message: string;
}

/** The codes a policy problem can have. */
export type PolicyErrorCode = Extract<ErrorCode, `E_POLICY_${string}`>;

/** A policy could not be loaded or is invalid; `problems` lists every problem found (at least one). */
export class PolicyError extends SpecterError {
  /** Every problem, in document order. */
  readonly problems: readonly PolicyProblem[];

  /** Creates an error whose code and message are those of the first problem. */
  constructor(problems: readonly PolicyProblem[], options: SpecterErrorOptions = {}) {
    const first = problems[0] ?? { code: "E_POLICY_SCHEMA", field: "(policy)", message: "Invalid policy" };
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem(s))` : "";
    super(first.code, `${first.message}${more}`, {
      ...options,
      details: { field: first.field, ...options.details },
    });
    this.name = "PolicyError";
    this.problems = problems;
  }
}

/** The sandbox cannot be set up; never silently replaced by a weaker one. */
export class SandboxError extends SpecterError {
  /** Creates an `E_SANDBOX_UNAVAILABLE`, `E_SANDBOX_START`, `E_SANDBOX_MOUNTS` or `E_SANDBOX_NETWORK` error. */
  constructor(
    code: "E_SANDBOX_UNAVAILABLE" | "E_SANDBOX_START" | "E_SANDBOX_MOUNTS" | "E_SANDBOX_NETWORK",
    message: string,
    options: SpecterErrorOptions = {},
  ) {
    super(code, message, options);
    this.name = "SandboxError";
  }
}

/** The codes a {@link ProtocolError} can have. */
export type ProtocolErrorCode = Extract<ErrorCode, `E_PROTOCOL${string}` | "E_RESIZE_RANGE">;

/** A driver message could not be accepted; the session goes on. */
export class ProtocolError extends SpecterError {
  /** Creates an `E_PROTOCOL*` or `E_RESIZE_RANGE` error. */
  constructor(code: ProtocolErrorCode, message: string, options: SpecterErrorOptions = {}) {
    super(code, message, options);
    this.name = "ProtocolError";
  }
}

/** An operation on a session failed (the session ended, a recording, audit log or bundle could not be written, I/O failed). */
export class SessionError extends SpecterError {
  /**
   * Creates an `E_SESSION_CLOSED`, `E_SESSION_UNKNOWN`, `E_SESSION_LIMIT`, `E_EXPECT_TIMEOUT`, `E_RECORD`, `E_AUDIT`, `E_ARTIFACTS`, `E_IO` or
   * `E_STDOUT_CLOSED` error.
   */
  constructor(
    code:
      | "E_SESSION_CLOSED"
      | "E_SESSION_UNKNOWN"
      | "E_SESSION_LIMIT"
      | "E_EXPECT_TIMEOUT"
      | "E_RECORD"
      | "E_AUDIT"
      | "E_ARTIFACTS"
      | "E_IO"
      | "E_STDOUT_CLOSED",
    message: string,
    options: SpecterErrorOptions = {},
  ) {
    super(code, message, options);
    this.name = "SessionError";
  }
}

/** An audit log failed verification (`specter audit verify`). */
export class AuditError extends SpecterError {
  /** Creates an `E_AUDIT_TAMPERED` error. */
  constructor(code: "E_AUDIT_TAMPERED", message: string, options: SpecterErrorOptions = {}) {
    super(code, message, options);
    this.name = "AuditError";
  }
}

/** The codes a {@link FileError} can have. */
export type FileErrorCode = Extract<ErrorCode, `E_PATH_${string}` | `E_FILE_${string}`>;

/** A path could not be resolved safely, or a file could not be read within its bounds. */
export class FileError extends SpecterError {
  /** Creates an `E_PATH_*` or `E_FILE_*` error. */
  constructor(code: FileErrorCode, message: string, options: SpecterErrorOptions = {}) {
    super(code, message, options);
    this.name = "FileError";
  }
}

/** The codes a {@link DaemonError} can have. */
export type DaemonErrorCode = Extract<
  ErrorCode,
  `E_DAEMON_${string}` | "E_KEEPER" | `E_LOG_${string}` | "E_SESSION_EXISTS"
>;

/** The daemon, its keeper or a session's durable frame log failed, or a socket peer was refused. */
export class DaemonError extends SpecterError {
  /** Creates an `E_DAEMON_*`, `E_KEEPER`, `E_LOG_*` or `E_SESSION_EXISTS` error. */
  constructor(code: DaemonErrorCode, message: string, options: SpecterErrorOptions = {}) {
    super(code, message, options);
    this.name = "DaemonError";
  }
}

/** Returns `error` as a {@link SpecterError}, wrapping anything else as `E_IO` with the original as cause. */
export function toSpecterError(error: unknown): SpecterError {
  if (error instanceof SpecterError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new SessionError("E_IO", `Unexpected failure: ${message}`, { cause: error });
}
