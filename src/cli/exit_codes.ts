/**
 * Process exit codes of the `specter` command.
 *
 * @module
 */
import type { ErrorCode } from "../errors.ts";
import type { ExitFrame, SignalName } from "../protocol/mod.ts";
import { platformTable } from "../pty/mod.ts";

/**
 * Exit code for an error Specter itself reports: usage, protocol, policy, scenario-file, path/file and
 * replay-bundle errors 2, and so is a session name that names no session (`E_SESSION_UNKNOWN`, the same
 * for attach, send, kill and logs), one already taken (`E_SESSION_EXISTS`) or already ended (`E_SESSION_CLOSED`), or a web viewer address asked of a daemon without a
 * listener (`E_REMOTE_NONE`): the caller's input, like a missing file; a broken audit chain (`E_AUDIT_TAMPERED`) 1; not found 127; not executable
 * 126; stdout closed by its reader 141 (128 + SIGPIPE, what a shell reports for a writer whose reader
 * went away); anything else (sandbox unavailable, spawn failure) 125.
 */
export function exitCodeForError(code: ErrorCode): number {
  switch (code) {
    case "E_USAGE":
    case "E_UNSAFE_ACK_REQUIRED":
    case "E_PROTOCOL":
    case "E_PROTOCOL_VERSION":
    case "E_PROTOCOL_LINE_TOO_LONG":
    case "E_PROTOCOL_UTF8":
    case "E_PROTOCOL_BASE64":
    case "E_RESIZE_RANGE":
    case "E_REPLAY_BUNDLE":
    case "E_REPLAY_CHECKSUM":
    case "E_REPLAY_EVENTS":
    case "E_REPLAY_INCOMPLETE":
    case "E_REPLAY_TAMPERED":
    case "E_REPLAY_RUN":
    case "E_REPLAY_NORMALIZE":
    case "E_SCENARIO_PARSE":
    case "E_SCENARIO_SCHEMA":
    case "E_SESSION_UNKNOWN":
    case "E_SESSION_EXISTS":
    case "E_SESSION_CLOSED":
    case "E_REMOTE_NONE":
      return 2;
    case "E_AUDIT_TAMPERED":
      // The log was read and found broken: a failed check (like a failed test), not a bad command line.
      return 1;
    case "E_SPAWN_NOT_FOUND":
      return 127;
    case "E_STDOUT_CLOSED":
      return 141;
    case "E_SPAWN_NOT_EXECUTABLE":
      return 126;
    default:
      // A bad policy, or a file argument that is not a bounded regular file, is bad input, like a bad flag.
      // A file Specter could not write (E_FILE_WRITE: disk full) is Specter's failure, not bad input.
      return /^E_(POLICY|PATH|FILE)_/.test(code) && code !== "E_FILE_UNSUPPORTED" && code !== "E_FILE_WRITE"
        ? 2
        : 125;
  }
}

/**
 * Exit code mirroring the program: its own code; 124 when it timed out (like timeout(1)); 128 + signal
 * number when a signal ended it.
 */
export function exitCodeForExit(frame: ExitFrame): number {
  if (frame.timed_out) return 124;
  if (frame.code !== null) return frame.code;
  const signal = frame.signal;
  if (signal === null) return 128;
  // Named signals come from the table; others are reported as "SIG<number>".
  const named = platformTable().signals[signal as SignalName] as number | undefined;
  return 128 + (named ?? Number(/^SIG(\d+)$/.exec(signal)?.[1] ?? 0));
}
