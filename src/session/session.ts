/**
 * A program running on its own terminal, observed as a stream of frames.
 *
 * Lifecycle: `start` → output/events → `exit`. `exit` is emitted only once the terminal is drained to
 * EOF/EIO **and** the child is reaped, after every remaining process of its session was killed.
 *
 * @module
 */
import { nowSeconds } from "../clock.ts";
import {
  type DriverMessage,
  type ExitFrame,
  type Frame,
  type FrameBody,
  MAX_COLS,
  MAX_DURATION_MS,
  MAX_ROWS,
  type NetAuditFields,
  type ScreenSnapshot,
  type SessionInfo,
  type SignalName,
} from "../protocol/mod.ts";
import { SessionError, UsageError } from "../errors.ts";
import { payloadText, toPayload } from "../frames/mod.ts";
import {
  childWatcher,
  type ExitWatcher,
  libc,
  setWindowSize,
  shutdownWrite,
  signalKeys,
  signalName,
  type WaitStatus,
} from "../pty/mod.ts";
import type { Launched, ProcessTree } from "../launch/mod.ts";
import type { CastWriter } from "../recording/mod.ts";
import { type BudgetHost, Budgets, reportedBefore } from "./budgets.ts";
import { FlowControl, type FlowHost } from "./flow_control.ts";
import { FrameLog, type SubscribeOptions, type Subscription } from "./frame_log.ts";
import { InputPump, terminalWrite } from "./input_pump.ts";
import { TerminalReader, type TerminalReaderHooks } from "./terminal_reader.ts";
import { Timers } from "./timers.ts";
import { WindDown, type WindDownHost } from "./wind_down.ts";
import { type QuietHost, QuietWatch } from "./quiet_watch.ts";
import { encodeKey } from "./keys.ts";
import type { ResolvedOptions } from "./options.ts";
import { OutputTail } from "./output_tail.ts";
import { SessionScreen, type SessionScreenHost } from "./session_screen.ts";
import { applyDriverMessage } from "./driver_dispatch.ts";
import { type OutputHost, OutputPath } from "./output_path.ts";
import { SessionRecording } from "./session_recording.ts";
import { Termination, type TerminationHost } from "./termination.ts";
import { CommandMarks, type CommandMarksHost } from "./command_marks.ts";
import { VERSION } from "../version.ts";
import { protectedReport } from "./protected_report.ts";
import type { SnapshotOptions } from "../terminal/mod.ts";
import type { Ceilings } from "../ceilings/mod.ts";
import type { LaunchInfo } from "./launch_info.ts";

/** How long the terminal model may still parse a program's output after it exited (ScreenTracker.finish). */
const SCREEN_FINISH_MS = 2000;
/** `waitpid` looks for the program's exit after its terminal's EOF: at once, then 1 ms apart. */
const EXIT_LOOKS = 3;

const encoder = new TextEncoder();
const lossy = new TextDecoder();
/** The recording of every session that records nothing (it holds no state then: one serves them all). */
const NO_RECORDING = new SessionRecording(null, 0, () => {});

/** What a host (the daemon) adds to a session: a durable log, and taking over one a previous host ran. */
export interface SessionHooks {
  /**
   * Called with every frame before any reader can take it (the daemon's frame log writes it to disk
   * there). It must not throw: a host reports its own failures.
   */
  readonly sink?: (frame: Frame) => void;
  /**
   * Ends the input of a `tty: false` session whose socket another process holds (the daemon's keeper,
   * which relays input): called once, when every byte typed was written, with how many bytes were
   * written on the session's terminal descriptor (the relay) in all. It must not throw.
   */
  readonly endInput?: (written: number) => void;
  /**
   * The session continues one a previous host ran: no `start` frame, seqs go on from `nextSeq`, and the
   * frames of `history` (its log) rebuild the output tail and the screen.
   */
  readonly resume?: {
    readonly nextSeq: number;
    readonly history: readonly Frame[];
    /** The output offset the terminal's output resumes at ({@link Session.outputConsumed} counts on). */
    readonly outputOffset: number;
    /** True when its input was closed already: typing is then `E_SESSION_CLOSED`. */
    readonly inputClosed?: boolean;
    /**
     * When the program started (Unix time, seconds): the wall clock and `duration_ms` count from there, so a
     * timeout keeps its deadline across the change of host. The output budget counts on from `outputOffset`.
     */
    readonly started?: number;
  };
}

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

  readonly #options: ResolvedOptions;
  readonly #ceilings: Ceilings;
  readonly #budgets: Budgets;
  readonly #flow: FlowControl;
  readonly #windDown: WindDown;
  readonly #timers = new Timers();
  /** The program's processes: signals, kills, the sandbox's init (whatever the backend). */
  readonly #tree: ProcessTree;
  readonly #master: number;
  /** Where the program's output is read and its input written: the master, or the socket without a tty. */
  readonly #io: number;
  /**
   * `#io` is the program's own socket (`tty: false`, spawned here), whose writing side can be shut down to
   * end its input; a daemon's session reads a relay from its keeper instead.
   */
  readonly #ownSocket: boolean;
  /** Ends the input where another process holds the program's socket (see {@link SessionHooks.endInput}). */
  readonly #endInput: ((written: number) => void) | null;
  /** Every frame of the session, for its subscribers. */
  readonly #log: FrameLog;
  /** The authoritative subscriber: `frames()`/`nextFrames()`; its lag pauses reading. */
  readonly #main: Subscription;
  readonly #tail: OutputTail;
  readonly #output: OutputPath;
  readonly #recording: SessionRecording;
  readonly #end: Termination;
  /** `command` frames from a shell's OSC 133 marks. */
  readonly #marks: CommandMarks;
  /** When the program started, as `performance.now()` (earlier than this object for a resumed session). */
  readonly #startedAt: number;
  #resolveExited!: (frame: ExitFrame) => void;
  #seq = 0;
  /** Typed input not yet written to the terminal. */
  readonly #pump: InputPump;
  /** Reads the terminal (on the reader thread or the JS thread); knows when the output ended. */
  readonly #reader: TerminalReader;
  /** The leader's wait status, once reaped. */
  #reaped: WaitStatus | null = null;
  /** The terminal model and the snapshot requests still owed. */
  readonly #screen: SessionScreen;
  /** `idle` and `prompt` frames. */
  readonly #quiet: QuietWatch;
  readonly #sink: ((frame: Frame) => void) | null;
  readonly #outputBase: number;
  readonly #watcher: ExitWatcher;

  /**
   * The host of every part (the flow, the budgets, the reader, the wind-down, …): ONE object per session,
   * its methods on a prototype that all sessions share. A host literal of arrow functions per part cost
   * ~3 KiB per session (40 closures, 12 objects), and a thousand idle sessions live in one process (issue
   * 27). It is declared in Session's body so that it reaches the session's private parts; everything it
   * reads is read when called, as the arrow functions did, so parts may be built in any order.
   */
  static readonly #Host = class SessionHost
    implements
      TerminationHost,
      CommandMarksHost,
      FlowHost,
      OutputHost,
      QuietHost,
      SessionScreenHost,
      TerminalReaderHooks,
      WindDownHost,
      BudgetHost {
    readonly #s: Session;
    constructor(session: Session) {
      this.#s = session;
    }
    // Termination, WindDown, Budgets, OutputPath and CommandMarks read these.
    get tree(): ProcessTree {
      return this.#s.#tree;
    }
    get reader(): TerminalReader {
      return this.#s.#reader;
    }
    get pid(): number {
      return this.#s.pid;
    }
    get budgets(): Budgets {
      return this.#s.#budgets;
    }
    get flow(): FlowControl {
      return this.#s.#flow;
    }
    get nonce(): string | undefined {
      return this.#s.markNonce ?? undefined;
    }
    // Frames and time.
    emit(body: FrameBody): void {
      this.#s.#emit(body);
    }
    later(ms: number, fn: () => void): ReturnType<typeof setTimeout> {
      return this.#s.#later(ms, fn);
    }
    clear(timer: ReturnType<typeof setTimeout> | undefined): void {
      this.#s.#timers.clear(timer);
    }
    now(): number {
      return performance.now();
    }
    // The program's end.
    kill(): void {
      this.#s.#kill();
    }
    terminate(): void {
      void this.#s.terminate();
    }
    reaped(): boolean {
      return this.#s.#reaped !== null;
    }
    finish(): void {
      this.#s.#finish();
    }
    // Flow control and the reader.
    wake(): void {
      this.#s.#reader.wake();
    }
    lagBytes(): number {
      return this.#s.#log.lagBytes;
    }
    inputPending(): number {
      return this.#s.#pump.pending;
    }
    ended(): boolean {
      return this.#s.#windDown.finished || this.#s.#reader.eof;
    }
    blocked(): boolean {
      return this.#s.#flow.blocked;
    }
    pressure(behind: boolean): void {
      this.#s.#flow.backlog(behind);
    }
    output(bytes: Uint8Array): void {
      this.#s.#output.read(bytes);
    }
    eof(): void {
      this.#s.#onEof();
    }
    wantsWrite(): boolean {
      return this.#s.#pump.waiting;
    }
    writable(): void {
      this.#s.#pump.flush();
      this.#s.#afterInput();
    }
    fail(error: unknown): void {
      this.#s.#fail(error);
    }
    released(): void {
      this.#s.#windDown.check();
    }
    answered(): void {
      this.#s.#windDown.check();
    }
    snapshotsPending(): number {
      return this.#s.#screen.owed;
    }
    // Output text, quiet and prompts.
    activity(): void {
      this.#s.#quiet.output();
    }
    text(text: string): void {
      const s = this.#s;
      s.#marks.output(text, s.#seq - 1); // After its stdout frame: marks end in the frames after it.
      s.#tail.push(text);
      s.#screen.output(text);
      s.#recording.event("o", text);
    }
    currentLine(): string {
      return this.#s.#tail.currentLine;
    }
    prompt(): void {
      this.#s.#quiet.promptMark();
    }
  };

  /** @internal Use {@link spawn}. */
  constructor(
    launched: Launched,
    options: ResolvedOptions,
    recorder: CastWriter | null,
    launch: LaunchInfo,
    hooks: SessionHooks = {},
  ) {
    const started = hooks.resume?.started;
    this.#startedAt = started === undefined
      ? performance.now()
      : performance.now() - Math.max(0, Date.now() - started * 1000);
    const child = launched.child;
    this.#sink = hooks.sink ?? null;
    this.#watcher = launched.watcher ?? childWatcher();
    this.launch = launch;
    this.#ceilings = launched.ceilings;
    this.#tree = launched.processTree((ms, fn) => void this.#later(ms, fn));
    this.#options = options;
    this.#master = child.master;
    // Without a terminal (`tty: false`) the program's fds are a socket: its input and output go there.
    this.#io = child.io ?? child.master;
    this.#ownSocket = options.tty === false && child.io !== undefined && launched.watcher === undefined &&
      hooks.resume === undefined;
    this.#endInput = hooks.endInput ?? null;
    this.#pump = new InputPump(terminalWrite(this.#io));
    // Its input ended under the previous host: nothing more may be typed.
    if (hooks.resume?.inputClosed === true) this.#pump.end(() => {});
    this.pid = child.pid;
    this.argv = options.argv;
    this.cwd = options.cwd;
    this.markNonce = options.commandMarkNonce;
    this.#recording = recorder === null
      ? NO_RECORDING
      : new SessionRecording(recorder, this.#startedAt, (c, m, d) => this.#emitError(c, m, d));
    const host = new Session.#Host(this);
    this.#end = new Termination(host);
    this.info = {
      id: options.id,
      title: options.title,
      description: options.description,
      parent_agent: options.parentAgent,
    };
    this.#tail = new OutputTail(options.lastLines);
    this.#marks = new CommandMarks(host);
    this.#log = new FrameLog({
      onDrain: () => this.#flow.drained(),
      ...(hooks.resume === undefined ? {} : { first: hooks.resume.nextSeq }),
    });
    this.#outputBase = hooks.resume?.outputOffset ?? 0;
    this.#flow = new FlowControl(options, host);
    this.#main = this.#log.subscribe({ authoritative: true });
    this.#output = new OutputPath(host);
    this.#quiet = new QuietWatch(options, host);
    this.exited = new Promise((resolve) => this.#resolveExited = resolve);
    this.#screen = new SessionScreen(options, host);

    if (hooks.resume === undefined) {
      this.#emit({
        type: "start",
        protocol: 1,
        version: VERSION,
        session: this.info,
        argv: options.argv.slice(), // Not `[...argv]`: a spread grows its copy to 17 slots (kept in the head).
        cwd: options.cwd,
        cols: options.cols,
        rows: options.rows,
        pid: child.pid,
        sandbox: launched.backend,
        ...(launch.policy === null ? {} : { policy: launch.policy.source }),
        ...(options.artifacts === null ? {} : { artifacts: options.artifacts }),
      });
    } else {
      this.#seq = hooks.resume.nextSeq;
      this.#replay(hooks.resume.history);
    }
    this.#reader = new TerminalReader(this.#io, options.readerThread, host);
    this.#windDown = new WindDown(host);
    const { timeoutMs, maxOutputBytes, limits: { cpuSeconds } } = options;
    const budgetLimits = {
      timeoutMs,
      maxOutputBytes,
      cpuSeconds,
      outputBefore: this.#outputBase,
      ...(hooks.resume === undefined ? {} : { before: reportedBefore(hooks.resume.history) }),
    };
    this.#budgets = new Budgets(budgetLimits, launched.ceilings, host, this.#startedAt);
    if (options.heartbeatMs > 0) this.#timers.every(options.heartbeatMs, () => this.#emit({ type: "ping" }));
    // Last: a status already there is reported at once, to a session whose parts all exist.
    this.#watcher.watch(child.pid, (status, at) => this.#onStatus(status, at));
  }

  /** True once the `exit` frame was emitted. */
  get finished(): boolean {
    return this.#windDown.finished;
  }

  /**
   * True when the program switched on application cursor keys (arrows then send `ESC O x`). The terminal
   * model decides when there is one and it has parsed all output; otherwise a scanner of the output does
   * (it runs as output is read, so it is never behind, but it does not see resets such as `ESC c`).
   */
  get applicationCursor(): boolean {
    return this.#screen.applicationCursor;
  }

  /** Bytes of output read so far. */
  get outputBytes(): number {
    return this.#budgets.outputBytes;
  }

  /**
   * Bytes of the program's output that the frames emitted so far hold (a character cut by a read is held
   * back until it is whole). A host that logs frames resumes reading the output there.
   */
  get outputConsumed(): number {
    return this.#outputBase + this.#output.consumed;
  }

  /** True when output was cut because `maxOutputBytes` was reached. */
  get truncated(): boolean {
    return this.#budgets.truncated;
  }

  /**
   * Takes every frame not yet taken, waiting for at least one; `[]` once the session is over and drained.
   * This is the session's authoritative reader (with {@link frames}): it misses nothing, and while it
   * stays more than `bufferBytes` behind the session stops reading the program.
   */
  nextFrames(): Promise<Frame[]> {
    return this.#main.take();
  }

  /** All frames, from `start` to `exit`, through the authoritative reader (see {@link nextFrames}). */
  async *frames(): AsyncIterableIterator<Frame> {
    for (;;) {
      const batch = await this.#main.take();
      if (batch.length === 0) return;
      yield* batch;
    }
  }

  /** Payload bytes of the frames the session holds for its readers (bounded by the frame log's windows). */
  get heldFrameBytes(): number {
    return this.#log.heldBytes;
  }

  /**
   * Another reader of the session's frames, from `options.from` (default 0), with its own cursor. It
   * never slows the program down: one that falls behind the log's window gets an `overflow` frame
   * (`reason: "lagged"`) in place of what it missed. Pass `authoritative: true` only for a reader that
   * must miss nothing (it then holds reading back like {@link frames}).
   */
  subscribe(options: SubscribeOptions = {}): Subscription {
    return this.#log.subscribe(options);
  }

  /** Types text (UTF-8) or raw bytes into the terminal (throws `E_SESSION_CLOSED` after exit). */
  write(data: string | Uint8Array): void {
    const bytes = typeof data === "string" ? encoder.encode(data) : data;
    const text = typeof data === "string" ? data : undefined;
    this.#input(bytes, text);
  }

  /**
   * Ends the program's input (`tty: false` only): once what was typed is written, the socket's writing
   * side is shut down, and the program reads end-of-file (its output still comes). Typing afterwards is
   * `E_SESSION_CLOSED`; on a terminal it is `E_USAGE` (a terminal has no end of input: press ctrl-d, which
   * the line discipline turns into end-of-file at the start of a line). In a session the daemon runs, its
   * keeper shuts the socket down (see {@link SessionHooks.endInput}). Closing it again changes nothing.
   */
  closeInput(): void {
    this.#assertOpen();
    if (this.#options.tty !== false) {
      throw new UsageError(
        'Input can only be closed without a terminal (tty false); on a terminal press "ctrl-d"',
      );
    }
    const io = this.#io;
    const pump = this.#pump;
    const endInput = this.#endInput;
    if (this.#ownSocket) pump.end(() => shutdownWrite(io));
    // The keeper holds the program's socket: it ends the input after the bytes written on the relay.
    else if (endInput !== null) pump.end(() => endInput(pump.written));
    else throw new UsageError("Input cannot be closed in this session: no host relays its end");
    this.#afterInput();
  }

  /**
   * Bytes typed but not yet written to the terminal: the program is not reading them. The kernel's
   * terminal buffer (a few KiB) is full by then.
   */
  get pendingInputBytes(): number {
    return this.#pump.pending;
  }

  /**
   * Resolves once at most `maxPending` bytes of input wait for the program and the frame queue is within
   * `bufferBytes` (or the session is over). A driver that awaits this before accepting more input
   * applies back-pressure to its source instead of buffering what the program does not read.
   */
  inputRoom(maxPending: number): Promise<void> {
    return this.#flow.inputRoom(maxPending);
  }

  /** Presses a named key (see `keys.ts`), honouring application cursor mode. */
  press(key: string): void {
    const sequence = encodeKey(key, { applicationCursor: this.applicationCursor });
    this.#input(encoder.encode(sequence), sequence, key);
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
    this.#emit({ type: "resize", cols, rows });
    if (!setWindowSize(this.#master, cols, rows)) {
      this.#emitError("E_IO", `Resizing the terminal to ${cols}x${rows} failed`);
      return;
    }
    this.#recording.event("r", `${cols}x${rows}`);
    this.#screen.resize(cols, rows);
    this.#emit({ type: "resize_ack", cols, rows });
  }

  /**
   * The screen: waits until everything read so far is parsed by the terminal model, then snapshots it.
   * Works after `exit` too. The first call creates the model when the session was not spawned with
   * `screen: true` (see `SpawnOptions.screen` for when that snapshot is `partial`).
   */
  screen(options: SnapshotOptions = {}): Promise<ScreenSnapshot> {
    return this.#screen.snapshot(options);
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
    if (this.finished || this.#reaped !== null) {
      throw new SessionError("E_SESSION_CLOSED", `Session "${this.info.id}" has exited`);
    }
    const delivered = this.#end.signal(signal);
    if (delivered === null) {
      throw new SessionError("E_SESSION_CLOSED", `The program of session "${this.info.id}" has exited`);
    }
    this.#emit({
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
  terminate(graceMs: number = this.#options.terminateGraceMs): Promise<ExitFrame> {
    if (Number.isNaN(graceMs) || graceMs > MAX_DURATION_MS) {
      throw new UsageError(`The grace must be at most ${MAX_DURATION_MS} ms, got ${graceMs}`);
    }
    // Once reaped, every member was already SIGKILLed, and the ids may have been reused.
    if (!this.finished) this.#end.terminate(graceMs);
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
      pong: (id) => this.#emit({ type: "pong", ...(id === undefined ? {} : { id }) }),
      snapshot: (name, cells) => {
        if (this.finished) throw new SessionError("E_SESSION_CLOSED", `Session "${this.info.id}" has ended`);
        this.#screen.request(name, cells);
      },
    }, message);
  }

  /**
   * Emits a `net` frame: one connection through the network proxy of an allow-list policy, as the proxy
   * (which runs beside the session, in its host) reported it at its close. Nothing once the session ended.
   */
  reportNet(fields: NetAuditFields): void {
    this.#emit({ type: "net", ...fields });
  }

  /** Emits an `error` frame (used by drivers for protocol errors; the session goes on). */
  reportError(code: string, message: string, details?: Record<string, unknown>): void {
    this.#emitError(code, message, details);
  }

  // ── frames ──────────────────────────────────────────────────────────────────────────────────────

  #emit(body: FrameBody): void {
    if (this.#log.closed) return;
    const frame = { seq: this.#seq++, ts: nowSeconds(), ...body } as Frame;
    this.#sink?.(frame);
    this.#log.append(frame);
    this.#flow.appended();
  }

  /** A resumed session's earlier frames rebuild what later frames depend on: the tail and the screen. */
  #replay(history: readonly Frame[]): void {
    for (const frame of history) {
      if (frame.type === "stdout") {
        const text = payloadText(
          frame.binary === true ? { data: frame.data, binary: true } : { data: frame.data, binary: false },
        );
        this.#tail.push(text);
        this.#screen.output(text);
      } else if (frame.type === "resize") {
        this.#screen.resize(frame.cols, frame.rows);
      }
    }
  }

  #emitError(code: string, message: string, details?: Record<string, unknown>): void {
    this.#emit({ type: "error", code, message, ...(details === undefined ? {} : { details }) });
  }

  // ── input ───────────────────────────────────────────────────────────────────────────────────────

  #assertOpen(): void {
    if (this.finished || this.#reader.eof) {
      throw new SessionError("E_SESSION_CLOSED", `Session "${this.info.id}" has ended`);
    }
  }

  #input(bytes: Uint8Array, text: string | undefined, key?: string): void {
    this.#assertOpen();
    if (this.#pump.ended) {
      throw new SessionError("E_SESSION_CLOSED", `The input of session "${this.info.id}" was closed`);
    }
    const payload = text !== undefined ? { data: text } : binaryOrText(bytes);
    this.#emit({ type: "stdin", ...payload, ...(key === undefined ? {} : { key }) });
    this.#marks.input(text ?? lossy.decode(bytes));
    this.#quiet.input();
    if (this.#options.record?.input) this.#recording.event("i", text ?? lossy.decode(bytes));
    if (this.#options.tty !== false) this.#tree.typed(bytes, () => signalKeys(this.#master));
    this.#pump.push(bytes);
    this.#afterInput();
  }

  /** After input moved: wake callers waiting for room, and poll for POLLOUT while input waits. */
  #afterInput(): void {
    this.#flow.wakeRoomWaiters();
    if (this.#pump.waiting) this.#reader.pollAgain();
  }

  // ── exit ────────────────────────────────────────────────────────────────────────────────────────

  #lookForExit(looks: number): void {
    if (this.#reaped !== null || looks <= 0) return;
    if (!this.#watcher.look(this.pid)) this.#later(1, () => this.#lookForExit(looks - 1));
  }

  #onStatus(status: WaitStatus, at: number): void {
    const table = libc().table;
    switch (status.kind) {
      case "stopped":
        this.#emit({ type: "stopped", signal: signalName(status.signal, table) });
        return;
      case "continued":
        this.#emit({ type: "continued" });
        return;
      case "exited":
      case "signaled":
        this.#budgets.leaderExited(status.kind === "signaled" ? signalName(status.signal, table) : null);
        this.#reaped = status;
        this.#end.leaderReaped();
        // A sandbox's init may still be on its way out: `exit` waits for it (the wind-down comes back).
        this.#tree.leaderReaped(at, () => this.#windDown.check());
        // What it printed last must not keep the clock waiting on the terminal model (seconds per MiB of
        // resets or line inserts): none of it after a timeout or ceiling, a bounded time otherwise.
        this.#screen.finish(this.#budgets.breached !== null ? 0 : SCREEN_FINISH_MS);
        // Nothing of the session may outlive its leader (background jobs, stopped jobs, daemons).
        this.#kill();
        if (!this.#reader.eof) this.#reader.readAvailable();
        this.#windDown.leaderReaped();
        return;
      default: {
        const never: never = status;
        throw new Error(`Unknown wait status ${JSON.stringify(never)}`);
      }
    }
  }

  /** The reactor dropped this session after an unexpected exception: report it and end the program. */
  #fail(error: unknown): void {
    this.#emitError(
      "E_IO",
      `Reading the terminal failed: ${error instanceof Error ? error.message : String(error)}`,
    );
    this.#flow.discard();
    this.#reader.stop();
    this.#kill();
    this.#windDown.check();
  }

  /** SIGKILLs every process of the program (its session, its sandbox, its cgroup). */
  #kill(): void {
    this.#end.kill();
  }

  #onEof(): void {
    this.#flow.wakeRoomWaiters(); // Input can no longer be written: nobody waits for room.
    this.#output.end();
    this.#windDown.check();
    // The terminal's last holder closed it: usually the program exiting. Look for its exit now and twice
    // more shortly, rather than wait for SIGCHLD to come through the event loop.
    this.#lookForExit(EXIT_LOOKS);
  }

  /** Everything is over ({@link WindDown}): release what is left and emit `exit`. */
  #finish(): void {
    this.#ceilings.close(); // Empty now: its directories go.
    this.#timers.clearAll();
    this.#quiet.stop();
    libc().sym.close(this.#master);
    if (this.#io !== this.#master) libc().sym.close(this.#io);
    this.#tree.close();
    const { code, signal } = this.#tree.exitStatus(this.#reaped!);
    const frame = {
      seq: this.#seq++,
      ts: nowSeconds(),
      type: "exit",
      code,
      signal,
      timed_out: this.#budgets.timedOut,
      ...(this.#end.stop === undefined ? {} : { stop: this.#end.stop }),
      duration_ms: Math.round((performance.now() - this.#startedAt) * 1000) / 1000,
      last_lines: this.#tail.lastLines(),
      session: this.info,
      output_bytes: this.#budgets.outputBytes,
      ...protectedReport(this.launch.protectedWatch),
    } satisfies ExitFrame;
    this.#sink?.(frame);
    this.#log.append(frame);
    this.#log.close();
    this.#flow.wakeRoomWaiters();
    this.#recording.close();
    this.#resolveExited(frame);
  }

  #later(ms: number, fn: () => void): ReturnType<typeof setTimeout> {
    return this.#timers.later(ms, fn);
  }
}

/** The payload of a `stdin` frame for typed bytes: text when they are UTF-8, base64 otherwise. */
function binaryOrText(bytes: Uint8Array): { data: string; binary?: true } {
  const payload = toPayload(bytes);
  return payload.binary ? { data: payload.data, binary: true } : { data: payload.data };
}
