/**
 * Applying one driver message (a line of NDJSON input to `specter run`, or a call of a library user) to a
 * session: the one place that maps each message type onto the session's operations.
 *
 * @module
 */
import {
  type DriverMessage,
  DURATION_TOO_LONG,
  isBase64,
  MAX_DURATION_MS,
  type SignalName,
} from "../protocol/mod.ts";
import { ProtocolError } from "../errors.ts";
import { fromBase64 } from "../frames/mod.ts";

/** What a driver message can do to a session (the session's own operations). */
export interface DriverTarget {
  /** Types text, or raw bytes. */
  write(data: string | Uint8Array): void;
  /** Presses a named key. */
  press(key: string): void;
  /** Resizes the terminal. */
  resize(cols: number, rows: number): void;
  /** Sends a signal to the program. */
  signal(signal: SignalName): void;
  /** Ends the session, SIGKILL after `graceMs` (the session's default when absent). */
  terminate(graceMs: number | undefined): void;
  /** Answers a `ping` with a `pong` frame. */
  pong(id: string | number | undefined): void;
  /** Asks for a `snapshot` frame named `name`. */
  snapshot(name: string | undefined, cells: boolean): void;
}

/**
 * Applies `message` to `target`. Throws `E_PROTOCOL_BASE64` for binary input that is not padded standard
 * base64, `E_PROTOCOL` for a `terminate` whose grace a timer cannot wait (a library caller's message does
 * not pass the schema), and whatever the target throws (`E_SESSION_CLOSED` after exit, `E_USAGE` for a
 * bad size).
 */
export function applyDriverMessage(target: DriverTarget, message: DriverMessage): void {
  switch (message.type) {
    case "input":
      if (message.binary && !isBase64(message.data)) {
        throw new ProtocolError("E_PROTOCOL_BASE64", 'Binary input "data" is not padded standard base64');
      }
      target.write(message.binary ? fromBase64(message.data) : message.data);
      return;
    case "key":
      target.press(message.key);
      return;
    case "resize":
      target.resize(message.cols, message.rows);
      return;
    case "signal":
      target.signal(message.signal);
      return;
    case "terminate": {
      const grace = message.grace_ms;
      if (grace !== undefined && !(Number.isInteger(grace) && grace >= 0 && grace <= MAX_DURATION_MS)) {
        throw new ProtocolError(
          "E_PROTOCOL",
          `Invalid "terminate" message: field "grace_ms": ${DURATION_TOO_LONG}, got ${grace}`,
          { details: { field: "grace_ms" } },
        );
      }
      target.terminate(grace);
      return;
    }
    case "ping":
      target.pong(message.id);
      return;
    case "snapshot":
      target.snapshot(message.name, message.cells === true);
      return;
    default: {
      const never: never = message;
      throw new Error(`Unhandled driver message ${JSON.stringify(never)}`);
    }
  }
}
