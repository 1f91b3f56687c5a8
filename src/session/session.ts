/**
 * A program running on its own terminal, observed as a stream of frames.
 *
 * Lifecycle: `start` → output/events → `exit`. `exit` is emitted only once the terminal is drained to
 * EOF/EIO **and** the child is reaped, after every remaining process of its session was killed.
 *
 * The class is the session's public face. Its parts are built and wired in `_wire_session.ts`, typing
 * goes through `_session_input.ts`, and the end (wait statuses, EOF, the `exit` frame) is in
 * `_session_exit.ts`; they share one {@link SessionParts} record.
 *
 * @module
 */
import {
  type DriverMessage,
  type ExitFrame,
  type Frame,
  MAX_COLS,
  MAX_DURATION_MS,
  MAX_ROWS,
  type NetAuditFields,
  type ScreenSnapshot,
  type SessionInfo,
  type SignalName,
} from "../protocol/mod.ts";
import { SessionError, UsageError } from "../errors.ts";
import { setWindowSize } from "../pty/mod.ts";
import type { Launched } from "../launch/mod.ts";
import type { CastWriter } from "../recording/mod.ts";
import type { SubscribeOptions, Subscription } from "./frame_log.ts";
import { encodeKey } from "./keys.ts";
import type { ResolvedOptions } from "./options.ts";
import { applyDriverMessage } from "./driver_dispatch.ts";
import type { SnapshotOptions } from "../terminal/mod.ts";
import type { LaunchInfo } from "./launch_info.ts";
import type { SessionHooks } from "./session_hooks.ts";
import { emit, emitError, type SessionParts } from "./_session_parts.ts";
import { watchSession, wireSession } from "./_wire_session.ts";
import { closeInput, input } from "./_session_input.ts";

export type { SessionHooks };

const encoder = new TextEncoder();

/**
 * A running (or finished) session. Create with {@link spawn}.
 *
 * It ties its parts together: a {@link TerminalReader} reads the terminal, an {@link InputPump} writes
 * input, {@link FlowControl} decides when reading pauses, {@link Budgets} holds the wall clock, the
 * output budget and the ceilings, a {@link QuietWatch} reports `idle` and `prompt`, a {@link SessionScreen}
 * models the screen, a {@link FrameLog} keeps the frames for every subscriber, and {@link WindDown}
 * decides when `exit` may be emitted.
 */
export class Session {
  /** Session metadata as carried in `start` and `exit`. */
  readonly info: SessionInfo;
  /** The child's pid (also its session and process-group id). */
  readonly pid: number;
  /** The executed argv (program resolved to an absolute path). */
  readonly argv: readonly string[];
  /** The directory the program started in (on the host). */
  readonly cwd: string;
  /**
   * The nonce its shell's OSC 133 marks carry (shell integration), or null: then any mark counts, as a
   * claim of the output's. A daemon saves it to take the session back; it is shown nowhere.
   */
  readonly markNonce: string | null;
  /** Resolves with the `exit` frame once the session is over. Never rejects. */
  readonly exited: Promise<ExitFrame>;
  /** How the session was launched (backend, policy, plan fingerprint), for audit logs. */
  readonly launch: LaunchInfo;
  /** Its parts (see `_wire_session.ts`). */
  readonly #p: SessionParts;

  /** @internal Use {@link spawn}. */
  constructor(
    launched: Launched,
    options: ResolvedOptions,
    recorder: CastWriter | null,
    launch: LaunchInfo,
    hooks: SessionHooks = {},
  ) {
    const p = wireSession(launched, options, recorder, launch, hooks, () => void this.terminate());
    this.#p = p;
    this.launch = launch;
    this.pid = p.pid;
    this.argv = options.argv;
    this.cwd = options.cwd;
    this.markNonce = options.commandMarkNonce;
    this.info = p.info;
    this.exited = p.exited;
    // Last: a status already there is reported at once, to a session whose parts all exist.
    watchSession(p);
  }

  /** True once the `exit` frame was emitted. */
  get finished(): boolean {
    return this.#p.windDown.finished;
  }

  /**
   * True when the program switched on application cursor keys (arrows then send `ESC O x`). The terminal
   * model decides when there is one and it has parsed all output; otherwise a scanner of the output does
   * (it runs as output is read, so it is never behind, but it does not see resets such as `ESC c`).
   */
  get applicationCursor(): boolean {
    return this.#p.screen.applicationCursor;
  }

  /** Bytes of output read so far. */
  get outputBytes(): number {
    return this.#p.budgets.outputBytes;
  }

  /**
   * Bytes of the program's output that the frames emitted so far hold (a character cut by a read is held
   * back until it is whole). A host that logs frames resumes reading the output there.
   */
  get outputConsumed(): number {
    return this.#p.outputBase + this.#p.output.consumed;
  }

  /** True when output was cut because `maxOutputBytes` was reached. */
  get truncated(): boolean {
    return this.#p.budgets.truncated;
  }

  /**
   * Takes every frame not yet taken, waiting for at least one; `[]` once the session is over and drained.
   * This is the session's authoritative reader (with {@link frames}): it misses nothing, and while it
   * stays more than `bufferBytes` behind the session stops reading the program.
   */
  nextFrames(): Promise<Frame[]> {
    return this.#p.main.take();
  }

  /** All frames, from `start` to `exit`, through the authoritative reader (see {@link nextFrames}). */
  async *frames(): AsyncIterableIterator<Frame> {
    for (;;) {
      const batch = await this.#p.main.take();
      if (batch.length === 0) return;
      yield* batch;
    }
  }

  /** Payload bytes of the frames the session holds for its readers (bounded by the frame log's windows). */
  get heldFrameBytes(): number {
    return this.#p.log.heldBytes;
  }

  /**
   * Another reader of the session's frames, from `options.from` (default 0), with its own cursor. It
   * never slows the program down: one that falls behind the log's window gets an `overflow` frame
   * (`reason: "lagged"`) in place of what it missed. Pass `authoritative: true` only for a reader that
   * must miss nothing (it then holds reading back like {@link frames}).
   */
  subscribe(options: SubscribeOptions = {}): Subscription {
    return this.#p.log.subscribe(options);
  }

  /** Types text (UTF-8) or raw bytes into the terminal (throws `E_SESSION_CLOSED` after exit). */
  write(data: string | Uint8Array): void {
    const bytes = typeof data === "string" ? encoder.encode(data) : data;
    const text = typeof data === "string" ? data : undefined;
    input(this.#p, bytes, text);
  }

  /**
   * Ends the program's input (`tty: false` only): once what was typed is written, the socket's writing
   * side is shut down, and the program reads end-of-file (its output still comes). Typing afterwards is
   * `E_SESSION_CLOSED`; on a terminal it is `E_USAGE` (a terminal has no end of input: press ctrl-d, which
   * the line discipline turns into end-of-file at the start of a line). In a session the daemon runs, its
   * keeper shuts the socket down (see {@link SessionHooks.endInput}). Closing it again changes nothing.
   */
  closeInput(): void {
    closeInput(this.#p);
  }

  /**
   * Bytes typed but not yet written to the terminal: the program is not reading them. The kernel's
   * terminal buffer (a few KiB) is full by then.
   */
  get pendingInputBytes(): number {
    return this.#p.pump.pending;
  }

  /**
   * Resolves once at most `maxPending` bytes of input wait for the program and the frame queue is within
   * `bufferBytes` (or the session is over). A driver that awaits this before accepting more input
   * applies back-pressure to its source instead of buffering what the program does not read.
   */
  inputRoom(maxPending: number): Promise<void> {
    return this.#p.flow.inputRoom(maxPending);
  }

  /** Presses a named key (see `keys.ts`), honouring application cursor mode. */
  press(key: string): void {
    const sequence = encodeKey(key, { applicationCursor: this.applicationCursor });
    input(this.#p, encoder.encode(sequence), sequence, key);
  }

  /** Resizes the terminal; the child gets SIGWINCH. */
  resize(cols: number, rows: number): void {
    for (const [name, value, max] of [["cols", cols, MAX_COLS], ["rows", rows, MAX_ROWS]] as const) {
      if (!Number.isInteger(value) || value < 1 || value > max) {
        throw new UsageError(`Resize "${name}" must be an integer from 1 to ${max}, got "${value}"`);
      }
    }
    // The terminal stays open until `exit`, even when the program closed its side of it.
    if (this.finished) throw new SessionError("E_SESSION_CLOSED", `Session "${this.info.id}" has ended`);
    emit(this.#p, { type: "resize", cols, rows });
    if (!setWindowSize(this.#p.master, cols, rows)) {
      emitError(this.#p, "E_IO", `Resizing the terminal to ${cols}x${rows} failed`);
      return;
    }
    this.#p.recording.event("r", `${cols}x${rows}`);
    this.#p.screen.resize(cols, rows);
    emit(this.#p, { type: "resize_ack", cols, rows });
  }

  /**
   * The screen: waits until everything read so far is parsed by the terminal model, then snapshots it.
   * Works after `exit` too. The first call creates the model when the session was not spawned with
   * `screen: true` (see `SpawnOptions.screen` for when that snapshot is `partial`).
   */
  screen(options: SnapshotOptions = {}): Promise<ScreenSnapshot> {
    return this.#p.screen.snapshot(options);
  }

  /**
   * Sends a signal to the program (the direct child).
   *
   * The child leads its own session and its parent (Specter) is outside it, so its process group is
   * orphaned: the kernel discards TSTP whose action is the default. In that case SIGSTOP is sent, which is
   * what the default action would do, and the `signal` frame says so in `delivered_as`.
   */
  signal(signal: SignalName): void {
    // A program that closed its terminal (EOF) may still run; once reaped, its pid may be someone else's.
    if (this.finished || this.#p.reaped !== null) {
      throw new SessionError("E_SESSION_CLOSED", `Session "${this.info.id}" has exited`);
    }
    const delivered = this.#p.end.signal(signal);
    if (delivered === null) {
      throw new SessionError("E_SESSION_CLOSED", `The program of session "${this.info.id}" has exited`);
    }
    emit(this.#p, {
      type: "signal",
      signal,
      pid: delivered.pid,
      ...(delivered.deliveredAs === signal ? {} : { delivered_as: delivered.deliveredAs }),
    });
  }

  /**
   * Ends the session: SIGHUP and SIGTERM (and SIGCONT, so stopped processes see them) to every process of
   * the session, SIGKILL after `graceMs` (default: the session's `terminateGraceMs`; 0 kills at once).
   * Calling it again while terminating can only shorten the grace. Throws `E_USAGE` for a grace longer
   * than a timer can wait ({@link MAX_DURATION_MS}): it would kill at once.
   */
  terminate(graceMs: number = this.#p.options.terminateGraceMs): Promise<ExitFrame> {
    if (Number.isNaN(graceMs) || graceMs > MAX_DURATION_MS) {
      throw new UsageError(`The grace must be at most ${MAX_DURATION_MS} ms, got ${graceMs}`);
    }
    // Once reaped, every member was already SIGKILLed, and the ids may have been reused.
    if (!this.finished) this.#p.end.terminate(graceMs);
    return this.exited;
  }

  /** Applies one driver message (throws `E_PROTOCOL` for an unknown key, `E_SESSION_CLOSED` after exit). */
  send(message: DriverMessage): void {
    applyDriverMessage({
      write: (data) => this.write(data),
      press: (key) => this.press(key),
      resize: (cols, rows) => this.resize(cols, rows),
      signal: (signal) => this.signal(signal),
      terminate: (graceMs) => void this.terminate(graceMs),
      pong: (id) => emit(this.#p, { type: "pong", ...(id === undefined ? {} : { id }) }),
      snapshot: (name, cells) => {
        if (this.finished) throw new SessionError("E_SESSION_CLOSED", `Session "${this.info.id}" has ended`);
        this.#p.screen.request(name, cells);
      },
    }, message);
  }

  /**
   * Emits a `net` frame: one connection through the network proxy of an allow-list policy, as the proxy
   * (which runs beside the session, in its host) reported it at its close. Nothing once the session ended.
   */
  reportNet(fields: NetAuditFields): void {
    emit(this.#p, { type: "net", ...fields });
  }

  /** Emits an `error` frame (used by drivers for protocol errors; the session goes on). */
  reportError(code: string, message: string, details?: Record<string, unknown>): void {
    emitError(this.#p, code, message, details);
  }
}
