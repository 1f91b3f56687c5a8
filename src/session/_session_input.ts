/**
 * The typing path of a session: typed bytes become a `stdin` frame, reach the shell-mark and quiet
 * watchers and the recording, and wait in the {@link InputPump} until the terminal takes them; and the
 * end of input without a terminal.
 *
 * @module
 */
import { SessionError, UsageError } from "../errors.ts";
import { toPayload } from "../frames/mod.ts";
import { shutdownWrite, signalKeys } from "../pty/mod.ts";
import { emit, type SessionParts } from "./_session_parts.ts";

const lossy = new TextDecoder();

/** Throws `E_SESSION_CLOSED` once the session ended or its terminal's output did. */
export function assertOpen(p: SessionParts): void {
  if (p.windDown.finished || p.reader.eof) {
    throw new SessionError("E_SESSION_CLOSED", `Session "${p.info.id}" has ended`);
  }
}

/** Types `bytes` (`text` when they came as text, `key` when a named key was pressed). */
export function input(p: SessionParts, bytes: Uint8Array, text: string | undefined, key?: string): void {
  assertOpen(p);
  if (p.pump.ended) {
    throw new SessionError("E_SESSION_CLOSED", `The input of session "${p.info.id}" was closed`);
  }
  const payload = text !== undefined ? { data: text } : binaryOrText(bytes);
  emit(p, { type: "stdin", ...payload, ...(key === undefined ? {} : { key }) });
  p.marks.input(text ?? lossy.decode(bytes));
  p.quiet.input();
  if (p.options.record?.input) p.recording.event("i", text ?? lossy.decode(bytes));
  if (p.options.tty !== false) p.tree.typed(bytes, () => signalKeys(p.master));
  p.pump.push(bytes);
  afterInput(p);
}

/** Ends the program's input (`tty: false` only); see `Session.closeInput`. */
export function closeInput(p: SessionParts): void {
  assertOpen(p);
  if (p.options.tty !== false) {
    throw new UsageError(
      'Input can only be closed without a terminal (tty false); on a terminal press "ctrl-d"',
    );
  }
  const io = p.io;
  const pump = p.pump;
  const endInput = p.endInput;
  if (p.ownSocket) pump.end(() => shutdownWrite(io));
  // The keeper holds the program's socket: it ends the input after the bytes written on the relay.
  else if (endInput !== null) pump.end(() => endInput(pump.written));
  else throw new UsageError("Input cannot be closed in this session: no host relays its end");
  afterInput(p);
}

/** After input moved: wake callers waiting for room, and poll for POLLOUT while input waits. */
export function afterInput(p: SessionParts): void {
  p.flow.wakeRoomWaiters();
  if (p.pump.waiting) p.reader.pollAgain();
}

/** The payload of a `stdin` frame for typed bytes: text when they are UTF-8, base64 otherwise. */
function binaryOrText(bytes: Uint8Array): { data: string; binary?: true } {
  const payload = toPayload(bytes);
  return payload.binary ? { data: payload.data, binary: true } : { data: payload.data };
}
