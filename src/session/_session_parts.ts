/**
 * The parts one session is made of, as a single record its rooms share: the wiring that builds them
 * (`_wire_session.ts`), the typing path (`_session_input.ts`), the end (`_session_exit.ts`) and the
 * `Session` class, which is their public face. Also the one way a frame is emitted.
 *
 * @module
 */
import { nowSeconds } from "../clock.ts";
import type { ExitFrame, Frame, FrameBody, SessionInfo } from "../protocol/mod.ts";
import type { ExitWatcher, WaitStatus } from "../pty/mod.ts";
import type { ProcessTree } from "../launch/mod.ts";
import type { Ceilings } from "../ceilings/mod.ts";
import type { Budgets } from "./budgets.ts";
import type { FlowControl } from "./flow_control.ts";
import type { FrameLog, Subscription } from "./frame_log.ts";
import type { InputPump } from "./input_pump.ts";
import type { TerminalReader } from "./terminal_reader.ts";
import type { Timers } from "./timers.ts";
import type { WindDown } from "./wind_down.ts";
import type { QuietWatch } from "./quiet_watch.ts";
import type { ResolvedOptions } from "./options.ts";
import type { OutputTail } from "./output_tail.ts";
import type { SessionScreen } from "./session_screen.ts";
import type { OutputPath } from "./output_path.ts";
import type { SessionRecording } from "./session_recording.ts";
import type { Termination } from "./termination.ts";
import type { CommandMarks } from "./command_marks.ts";
import type { LaunchInfo } from "./launch_info.ts";

/** Everything a session holds, built once by `wireSession`; `seq` and `reaped` change as it runs. */
export interface SessionParts {
  /** Session metadata as carried in `start` and `exit`. */
  readonly info: SessionInfo;
  /** The child's pid (also its session and process-group id). */
  readonly pid: number;
  /** How the session was launched (backend, policy, plan fingerprint), for audit logs. */
  readonly launch: LaunchInfo;
  readonly options: ResolvedOptions;
  readonly ceilings: Ceilings;
  readonly budgets: Budgets;
  readonly flow: FlowControl;
  readonly windDown: WindDown;
  readonly timers: Timers;
  /** The program's processes: signals, kills, the sandbox's init (whatever the backend). */
  readonly tree: ProcessTree;
  readonly master: number;
  /** Where the program's output is read and its input written: the master, or the socket without a tty. */
  readonly io: number;
  /**
   * `io` is the program's own socket (`tty: false`, spawned here), whose writing side can be shut down to
   * end its input; a daemon's session reads a relay from its keeper instead.
   */
  readonly ownSocket: boolean;
  /** Ends the input where another process holds the program's socket (see `SessionHooks.endInput`). */
  readonly endInput: ((written: number) => void) | null;
  /** Every frame of the session, for its subscribers. */
  readonly log: FrameLog;
  /** The authoritative subscriber: `frames()`/`nextFrames()`; its lag pauses reading. */
  readonly main: Subscription;
  readonly tail: OutputTail;
  readonly output: OutputPath;
  readonly recording: SessionRecording;
  readonly end: Termination;
  /** `command` frames from a shell's OSC 133 marks. */
  readonly marks: CommandMarks;
  /** When the program started, as `performance.now()` (earlier than the session for a resumed one). */
  readonly startedAt: number;
  /** Typed input not yet written to the terminal. */
  readonly pump: InputPump;
  /** Reads the terminal (on the reader thread or the JS thread); knows when the output ended. */
  readonly reader: TerminalReader;
  /** The terminal model and the snapshot requests still owed. */
  readonly screen: SessionScreen;
  /** `idle` and `prompt` frames. */
  readonly quiet: QuietWatch;
  readonly sink: ((frame: Frame) => void) | null;
  /** The output offset this host's reading started at (a resumed session's). */
  readonly outputBase: number;
  readonly watcher: ExitWatcher;
  /** Resolves with the `exit` frame once the session is over. Never rejects. */
  readonly exited: Promise<ExitFrame>;
  readonly resolveExited: (frame: ExitFrame) => void;
  /** The seq of the next frame. */
  seq: number;
  /** The leader's wait status, once reaped. */
  reaped: WaitStatus | null;
}

/** Emits a frame to the sink and the log (nothing once the log closed, after `exit`). */
export function emit(p: SessionParts, body: FrameBody): void {
  if (p.log.closed) return;
  const frame = { seq: p.seq++, ts: nowSeconds(), ...body } as Frame;
  p.sink?.(frame);
  p.log.append(frame);
  p.flow.appended();
}

/** Emits an `error` frame. */
export function emitError(
  p: SessionParts,
  code: string,
  message: string,
  details?: Record<string, unknown>,
): void {
  emit(p, { type: "error", code, message, ...(details === undefined ? {} : { details }) });
}
