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
  isBase64,
  MAX_COLS,
  MAX_ROWS,
  type ScreenSnapshot,
  type SessionInfo,
  type SignalName,
} from "../protocol/mod.ts";
import { ProtocolError, SessionError, type SpecterError, UsageError } from "../errors.ts";
import { fromBase64, toBase64, Utf8Chunker } from "../frames/mod.ts";
import { childWatcher, libc, setWindowSize, signalName, type WaitStatus } from "../pty/mod.ts";
import type { Launched, ProcessTree } from "../launch/mod.ts";
import type { CastWriter } from "../recording/mod.ts";
import { FrameLog, type SubscribeOptions, type Subscription } from "./frame_log.ts";
import { InputPump, type WriteOutcome } from "./input_pump.ts";
import { TerminalReader } from "./terminal_reader.ts";
import { QuietWatch } from "./quiet_watch.ts";
import { encodeKey } from "./keys.ts";
import type { ResolvedOptions } from "./options.ts";
import { CursorKeyMode, OutputTail } from "./output_tail.ts";
import { VERSION } from "../version.ts";
import type { Policy } from "../policy/mod.ts";
import type { LaunchPlan, ProtectedWatch } from "../sandbox/mod.ts";
import { protectedReport } from "./protected_report.ts";
import { ScreenTracker, type SnapshotOptions } from "../terminal/mod.ts";
import type { Ceilings, EnforcedBy, Mechanism } from "../ceilings/mod.ts";

/** How long to wait for EOF on the terminal after the child was reaped and its session killed. */
const DRAIN_DEADLINE_MS = 2000;
/** How often the process tree is measured against memory, CPU and process ceilings. */
const LIMIT_SAMPLE_MS = 100;

type CapsuleKillReason = "memory" | "cpu" | "wall" | "processes" | "output";
/** How long the terminal model may still parse a program's output after it exited (ScreenTracker.finish). */
const SCREEN_FINISH_MS = 2000;
/** Re-checks for session members still dying before `exit` (5 ms apart, 2 s at most). */
const SWEEP_INTERVAL_MS = 5;
const MAX_SWEEPS = 400;

const encoder = new TextEncoder();
const lossy = new TextDecoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

type Timer = ReturnType<typeof setTimeout>;

/** How a session was launched: what an audit log records. Never holds environment values. */
export interface LaunchInfo {
  /** The sandbox backend. */
  readonly backend: string;
  /** The policy as enforced (paths resolved), or `null` for `none`/`external`. */
  readonly policy: Policy | null;
  /** The launch plan (fingerprint it with `fingerprintPlan`, as the audit log does). */
  readonly plan: LaunchPlan;
  /** The effective resource ceilings (`null`: none of that kind). */
  readonly limits: ResolvedOptions["limits"];
  /** Effective wall-clock limit in ms, or `null`. */
  readonly timeoutMs: number | null;
  /** Effective output budget in bytes, or `null`. */
  readonly maxOutputBytes: number | null;
  /** Which mechanism enforces each resource ceiling (cgroup, sampler, rlimit; `null`: not set). */
  readonly enforcedBy: EnforcedBy;
  /** Strict-write: walks the write roots again at exit for protected names the run created. */
  readonly protectedWatch?: ProtectedWatch | null;
}

/** A running (or finished) session. Create with {@link spawn}. */
export class Session {
  /** Session metadata as carried in `start` and `exit`. */
  readonly info: SessionInfo;
  /** The child's pid (also its session and process-group id). */
  readonly pid: number;
  /** The executed argv (program resolved to an absolute path). */
  readonly argv: readonly string[];
  /** Resolves with the `exit` frame once the session is over. Never rejects. */
  readonly exited: Promise<ExitFrame>;
  /** How the session was launched (backend, policy, plan fingerprint), for audit logs. */
  readonly launch: LaunchInfo;

  readonly #options: ResolvedOptions;
  readonly #ceilings: Ceilings;
  /** The program's processes: signals, kills, the sandbox's init (whatever the backend). */
  readonly #tree: ProcessTree;
  readonly #master: number;
  /** Every frame of the session, for its subscribers. */
  readonly #log: FrameLog;
  /** The authoritative subscriber: `frames()`/`nextFrames()`; its lag pauses reading. */
  readonly #main: Subscription;
  readonly #chunker = new Utf8Chunker();
  readonly #tail: OutputTail;
  readonly #cursorMode = new CursorKeyMode();
  readonly #recorder: CastWriter | null;
  readonly #startedAt = performance.now();
  #resolveExited!: (frame: ExitFrame) => void;
  #seq = 0;
  /** Typed input not yet written to the terminal. */
  readonly #pump: InputPump;
  /** Callers of {@link inputRoom} waiting for the input queue (and frame queue) to drain. */
  #roomWaiters: { readonly maxPending: number; readonly resolve: () => void }[] = [];
  #outputBytes = 0;
  /** Reads the terminal (on the reader thread or the JS thread); knows when the output ended. */
  readonly #reader: TerminalReader;
  #reaped: WaitStatus | null = null;
  #finished = false;
  /** Reading paused because the frame consumer is behind (`bufferBytes` queued). */
  #paused = false;
  /** Reading paused because the terminal model is behind (its high watermark). */
  #backlogged = false;
  /** The terminal model; created at the first output, resize or screen request (or at spawn with `screen`). */
  #screen: ScreenTracker | null = null;
  /** Snapshot requests still waiting for the model: `exit` waits for their frames. */
  #snapshotsPending = 0;
  #discard = false;
  #timedOut = false;
  #breached: CapsuleKillReason | null = null;
  #sweeps = 0;
  #truncated = false;
  #terminating = false;
  /** SIGKILL was sent while terminating, before the program ended: `exit.stop` is `killed`. */
  #killedWhileTerminating = false;
  /** `idle` and `prompt` frames. */
  readonly #quiet: QuietWatch;
  #timers = new Set<Timer>();
  #overflowTimer: Timer | undefined;

  /** @internal Use {@link spawn}. */
  constructor(launched: Launched, options: ResolvedOptions, recorder: CastWriter | null, launch: LaunchInfo) {
    const child = launched.child;
    this.launch = launch;
    this.#ceilings = launched.ceilings;
    this.#tree = launched.processTree((ms, fn) => void this.#later(ms, fn));
    this.#options = options;
    this.#master = child.master;
    this.#pump = new InputPump((chunk) => this.#writeTerminal(chunk));
    this.pid = child.pid;
    this.argv = options.argv;
    this.#recorder = recorder;
    this.info = {
      id: options.id,
      title: options.title,
      description: options.description,
      parent_agent: options.parentAgent,
    };
    this.#tail = new OutputTail(options.lastLines);
    this.#log = new FrameLog({ onDrain: () => this.#onDrain() });
    this.#main = this.#log.subscribe({ authoritative: true });
    this.#quiet = new QuietWatch(options, {
      now: () => performance.now(),
      later: (ms, fn) => void this.#later(ms, fn),
      currentLine: () => this.#tail.currentLine,
      emit: (event) => this.#emit(event),
    });
    this.exited = new Promise((resolve) => this.#resolveExited = resolve);

    this.#emit({
      type: "start",
      protocol: 1,
      version: VERSION,
      session: this.info,
      argv: [...options.argv],
      cwd: options.cwd,
      cols: options.cols,
      rows: options.rows,
      pid: child.pid,
      sandbox: launched.backend,
      ...(launch.policy === null ? {} : { policy: launch.policy.source }),
      ...(options.artifacts === null ? {} : { artifacts: options.artifacts }),
    });
    childWatcher().watch(child.pid, (status, at) => this.#onStatus(status, at));
    this.#reader = new TerminalReader(child.master, options.readerThread, {
      output: (bytes) => this.#onOutput(bytes),
      eof: () => this.#onEof(),
      blocked: () => this.#blocked(),
      wantsWrite: () => this.#pump.waiting,
      writable: () => {
        this.#pump.flush();
        this.#afterInput();
      },
      fail: (error) => this.#fail(error),
      released: () => this.#maybeFinish(),
      later: (ms, fn) => void this.#later(ms, fn),
    });
    if (options.timeoutMs !== null) {
      const wall = options.timeoutMs;
      this.#later(wall, () => {
        if (this.#reaped !== null) return; // It exited in time; only the wind-down is still going on.
        this.#timedOut = true;
        this.#capsuleKill("wall", wall, Math.round(performance.now() - this.#startedAt));
        void this.terminate();
      });
    }
    this.#watchLimits();
    if (options.heartbeatMs > 0) {
      const beat = setInterval(() => this.#emit({ type: "ping" }), options.heartbeatMs);
      this.#timers.add(beat);
    }
    if (options.screen) this.#tracker();
  }

  /** True once the `exit` frame was emitted. */
  get finished(): boolean {
    return this.#finished;
  }

  /**
   * True when the program switched on application cursor keys (arrows then send `ESC O x`). The terminal
   * model decides when there is one and it has parsed all output; otherwise a scanner of the output does
   * (it runs as output is read, so it is never behind, but it does not see resets such as `ESC c`).
   */
  get applicationCursor(): boolean {
    return this.#screen?.applicationCursor ?? this.#cursorMode.application;
  }

  /** Bytes of output read so far. */
  get outputBytes(): number {
    return this.#outputBytes;
  }

  /** True when output was cut because `maxOutputBytes` was reached. */
  get truncated(): boolean {
    return this.#truncated;
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
    if (this.#hasRoom(maxPending)) return Promise.resolve();
    return new Promise((resolve) => this.#roomWaiters.push({ maxPending, resolve }));
  }

  #hasRoom(maxPending: number): boolean {
    return this.#finished || this.#reader.eof ||
      (this.#pump.pending <= maxPending && this.#log.lagBytes <= this.#options.bufferBytes);
  }

  /** Resolves the {@link inputRoom} callers that have room now. */
  #wakeRoomWaiters(): void {
    if (this.#roomWaiters.length === 0) return;
    this.#roomWaiters = this.#roomWaiters.filter((waiter) => {
      if (!this.#hasRoom(waiter.maxPending)) return true;
      waiter.resolve();
      return false;
    });
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
    if (this.#finished) throw new SessionError("E_SESSION_CLOSED", `Session "${this.info.id}" has ended`);
    this.#emit({ type: "resize", cols, rows });
    if (!setWindowSize(this.#master, cols, rows)) {
      this.#emitError("E_IO", `Resizing the terminal to ${cols}x${rows} failed`);
      return;
    }
    this.#record("r", `${cols}x${rows}`);
    this.#tracker().resize(cols, rows);
    this.#emit({ type: "resize_ack", cols, rows });
  }

  /**
   * The screen: waits until everything read so far is parsed by the terminal model, then snapshots it.
   * Works after `exit` too. The first call creates the model when the session was not spawned with
   * `screen: true` (see `SpawnOptions.screen` for when that snapshot is `partial`).
   */
  screen(options: SnapshotOptions = {}): Promise<ScreenSnapshot> {
    return this.#tracker().snapshot(options);
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
    if (this.#finished || this.#reaped !== null) {
      throw new SessionError("E_SESSION_CLOSED", `Session "${this.info.id}" has exited`);
    }
    const delivered = this.#tree.signal(signal);
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
   * Calling it again while terminating can only shorten the grace.
   */
  terminate(graceMs: number = this.#options.terminateGraceMs): Promise<ExitFrame> {
    // Once reaped, every member was already SIGKILLed, and the ids may have been reused.
    if (this.#finished || this.#reaped !== null) return this.exited;
    if (!this.#terminating) {
      this.#terminating = true;
      this.#tree.terminate();
    }
    // A later call may only bring SIGKILL closer (e.g. a second ctrl-c): each schedules its own.
    if (graceMs <= 0) this.#kill();
    else this.#later(graceMs, () => this.#kill());
    return this.exited;
  }

  /** Applies one driver message (throws `E_PROTOCOL` for an unknown key, `E_SESSION_CLOSED` after exit). */
  send(message: DriverMessage): void {
    switch (message.type) {
      case "input":
        if (message.binary && !isBase64(message.data)) {
          throw new ProtocolError("E_PROTOCOL_BASE64", 'Binary input "data" is not padded standard base64');
        }
        this.write(message.binary ? fromBase64(message.data) : message.data);
        return;
      case "key":
        this.press(message.key);
        return;
      case "resize":
        this.resize(message.cols, message.rows);
        return;
      case "signal":
        this.signal(message.signal);
        return;
      case "terminate":
        void this.terminate(message.grace_ms);
        return;
      case "ping":
        this.#emit({ type: "pong", ...(message.id === undefined ? {} : { id: message.id }) });
        return;
      case "snapshot":
        this.#snapshotFrame(message.name, message.cells === true);
        return;
      default: {
        const never: never = message;
        throw new Error(`Unhandled driver message ${JSON.stringify(never)}`);
      }
    }
  }

  /** Answers a `snapshot` message with a `snapshot` frame (or an `error` frame); `exit` waits for it. */
  #snapshotFrame(name: string | undefined, cells: boolean): void {
    if (this.#finished) throw new SessionError("E_SESSION_CLOSED", `Session "${this.info.id}" has ended`);
    this.#snapshotsPending++;
    void this.screen({ cells }).then(
      (screen) => this.#emit({ type: "snapshot", ...(name === undefined ? {} : { name }), screen }),
      (error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        this.#emitError("E_IO", `The screen could not be snapshotted: ${message}`);
      },
    ).finally(() => {
      this.#snapshotsPending--;
      this.#maybeFinish();
    });
  }

  /** Emits an `error` frame (used by drivers for protocol errors; the session goes on). */
  reportError(code: string, message: string, details?: Record<string, unknown>): void {
    this.#emitError(code, message, details);
  }

  // ── frames ──────────────────────────────────────────────────────────────────────────────────────

  #emit(body: FrameBody): void {
    if (this.#log.closed) return;
    const frame = { seq: this.#seq++, ts: nowSeconds(), ...body } as Frame;
    this.#log.append(frame);
    // While discarding (after an overflow) nothing more is read into the log: never pause again.
    if (!this.#paused && !this.#discard && this.#log.lagBytes > this.#options.bufferBytes) this.#pause();
  }

  #emitError(code: string, message: string, details?: Record<string, unknown>): void {
    this.#emit({ type: "error", code, message, ...(details === undefined ? {} : { details }) });
  }

  #elapsed(): number {
    return (performance.now() - this.#startedAt) / 1000;
  }

  #record(code: "o" | "i" | "r", text: string): void {
    if (!this.#recorder) return;
    try {
      this.#recorder.event(this.#elapsed(), code, text);
    } catch (error: unknown) {
      // Once: the recorder stops at its last whole line after a failure and ignores later events.
      this.#emitError("E_RECORD", (error as Error).message, { ...(error as SpecterError).details });
    }
  }

  // ── input ───────────────────────────────────────────────────────────────────────────────────────

  #assertOpen(): void {
    if (this.#finished || this.#reader.eof) {
      throw new SessionError("E_SESSION_CLOSED", `Session "${this.info.id}" has ended`);
    }
  }

  #input(bytes: Uint8Array, text: string | undefined, key?: string): void {
    this.#assertOpen();
    const payload = text !== undefined ? { data: text } : this.#textOrBase64(bytes);
    this.#emit({ type: "stdin", ...payload, ...(key === undefined ? {} : { key }) });
    if (this.#options.record?.input) this.#record("i", text ?? lossy.decode(bytes));
    this.#pump.push(bytes);
    this.#afterInput();
  }

  #textOrBase64(bytes: Uint8Array): { data: string; binary?: true } {
    try {
      return { data: strictUtf8.decode(bytes) };
    } catch {
      return { data: toBase64(bytes), binary: true }; // Not UTF-8: echo the exact bytes.
    }
  }

  /** One non-blocking write of input to the terminal, for the {@link InputPump}. */
  #writeTerminal(chunk: Uint8Array): WriteOutcome {
    const lib = libc();
    const written = Number(lib.sym.write(this.#master, chunk, BigInt(chunk.length)));
    if (written >= 0) return written;
    const errno = lib.errno();
    if (errno === lib.table.errno.EINTR) return "interrupted";
    return errno === lib.table.errno.EAGAIN ? "again" : "gone";
  }

  /** After input moved: wake callers waiting for room, and poll for POLLOUT while input waits. */
  #afterInput(): void {
    this.#wakeRoomWaiters();
    if (this.#pump.waiting) this.#reader.pollAgain();
  }

  // ── output ──────────────────────────────────────────────────────────────────────────────────────

  #onOutput(bytes: Uint8Array): void {
    this.#quiet.output();
    if (this.#discard) return;
    const limit = this.#options.maxOutputBytes;
    let chunk = bytes;
    if (limit !== null && this.#outputBytes + bytes.length > limit) {
      chunk = bytes.subarray(0, Math.max(0, limit - this.#outputBytes));
    }
    this.#outputBytes += chunk.length;
    if (chunk.length > 0) this.#deliver(this.#chunker.push(chunk));
    if (chunk.length < bytes.length) this.#breachOutput(limit!);
  }

  #deliver(payload: { data: string; binary: boolean } | null): void {
    if (payload === null) return;
    const text = payload.binary ? lossy.decode(fromBase64(payload.data)) : payload.data;
    this.#emit(
      payload.binary ? { type: "stdout", data: payload.data, binary: true } : { type: "stdout", data: text },
    );
    this.#tail.push(text);
    this.#cursorMode.push(text);
    this.#tracker().output(text);
    this.#record("o", text);
  }

  /** The screen tracker, created on first use: a session that never prints or resizes holds none. */
  #tracker(): ScreenTracker {
    this.#screen ??= new ScreenTracker({
      size: { cols: this.#options.cols, rows: this.#options.rows },
      eager: this.#options.screen,
      history: this.#options.screenHistory,
      onPressure: (behind) => {
        this.#backlogged = behind;
        if (!behind) this.#reader.wake();
      },
    });
    return this.#screen;
  }

  /** True while reading the terminal is paused, for the consumer or for the terminal model. */
  #blocked(): boolean {
    return this.#paused || this.#backlogged;
  }

  #breachOutput(limit: number): void {
    this.#truncated = true;
    this.#discard = true;
    this.#emit({ type: "overflow", reason: "max_output", limit });
    this.#capsuleKill("output", limit, this.#outputBytes);
    this.#kill();
  }

  // ── resource ceilings ───────────────────────────────────────────────────────────────────────────

  /**
   * Checks the ceilings every {@link LIMIT_SAMPLE_MS} while a memory, CPU or process ceiling is set: the
   * session's cgroup counters where it has one (the kernel holds the limit; this reports the breach and
   * ends the session), else a sample of the sandbox's pid namespace. Rlimits act per process.
   */
  #watchLimits(): void {
    if (!this.#hasTreeLimits()) return;
    const sample = () => {
      if (this.#breached !== null || this.#reaped !== null) return;
      if (!this.#checkLimits()) this.#later(LIMIT_SAMPLE_MS, sample);
    };
    this.#later(LIMIT_SAMPLE_MS, sample);
  }

  #hasTreeLimits(): boolean {
    return this.#ceilings.watched;
  }

  /** Measures once; on a breach emits `capsule_kill`, kills the tree and returns true. */
  #checkLimits(): boolean {
    const breach = this.#ceilings.check(this.pid);
    if (breach === null) return false;
    this.#capsuleKill(breach.reason, breach.limit, breach.value, breach.enforcedBy);
    this.#kill();
    return true;
  }

  /** Emits `capsule_kill` once per session (the first breach is the reason). */
  #capsuleKill(reason: CapsuleKillReason, limit: number, value: number, enforcedBy?: Mechanism): void {
    if (this.#breached !== null) return;
    this.#breached = reason;
    this.#emit({
      type: "capsule_kill",
      reason,
      limit,
      value,
      ...(enforcedBy === undefined ? {} : { enforced_by: enforcedBy }),
    });
  }

  #pause(): void {
    this.#paused = true;
    this.#overflowTimer = this.#later(this.#options.overflowTimeoutMs, () => {
      if (!this.#paused) return;
      this.#emit({ type: "overflow", reason: "buffer", limit: this.#options.bufferBytes });
      // Output read from now on is dropped (the overflow frame says so) so the terminal can drain.
      this.#discard = true;
      this.#resume();
      this.#kill();
    });
  }

  #resume(): void {
    this.#paused = false;
    this.#clear(this.#overflowTimer);
    this.#overflowTimer = undefined;
    this.#reader.wake();
  }

  #onDrain(): void {
    if (this.#paused && this.#log.lagBytes <= this.#options.bufferBytes / 2) this.#resume();
    this.#wakeRoomWaiters();
  }

  // ── exit ────────────────────────────────────────────────────────────────────────────────────────

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
        // RLIMIT_CPU ends a process with SIGXCPU before the sampler may have seen the tree's total.
        if (
          status.kind === "signaled" && this.#options.limits.cpuSeconds !== null &&
          signalName(status.signal, libc().table) === "XCPU"
        ) {
          this.#capsuleKill(
            "cpu",
            this.#options.limits.cpuSeconds,
            this.#options.limits.cpuSeconds,
            "rlimit",
          );
        }
        // The tree as the leader left it counts too: a burst that ended between two samples is still a
        // breach. (Under bwrap the PID namespace has already taken the tree with it; this matters
        // for the none and external backends.)
        if (this.#breached === null && this.#hasTreeLimits()) this.#checkLimits();
        this.#reaped = status;
        // A sandbox's init may still be on its way out: `exit` waits for it (#maybeFinish comes back).
        this.#tree.leaderReaped(at, () => this.#maybeFinish());
        // What it printed last must not keep the clock waiting on the terminal model (seconds per MiB of
        // resets or line inserts): none of it after a timeout or ceiling, a bounded time otherwise.
        this.#screen?.finish(this.#breached !== null ? 0 : SCREEN_FINISH_MS);
        // Nothing of the session may outlive its leader (background jobs, stopped jobs, daemons).
        this.#kill();
        if (!this.#reader.eof) {
          this.#reader.readAvailable();
          this.#armDrainDeadline();
        }
        this.#maybeFinish();
        return;
      default: {
        const never: never = status;
        throw new Error(`Unknown wait status ${JSON.stringify(never)}`);
      }
    }
  }

  /**
   * After the leader was reaped and its session killed, EOF normally follows at once. If it does not,
   * someone outside the session holds the terminal open: stop waiting after a deadline. Not while the
   * consumer is behind (reading paused): that output is still owed to it, and a consumer that never
   * catches up is handled by the overflow timer.
   */
  #armDrainDeadline(): void {
    this.#later(DRAIN_DEADLINE_MS, () => {
      if (this.#reader.eof) return;
      if (this.#blocked()) {
        this.#armDrainDeadline();
        return;
      }
      // The reader thread is asked to stop first: its EOF follows, or this deadline comes back without it.
      if (this.#reader.giveUp()) this.#armDrainDeadline();
    });
  }

  /** The reactor dropped this session after an unexpected exception: report it and end the program. */
  #fail(error: unknown): void {
    this.#emitError(
      "E_IO",
      `Reading the terminal failed: ${error instanceof Error ? error.message : String(error)}`,
    );
    this.#discard = true;
    this.#reader.stop();
    this.#kill();
    this.#maybeFinish();
  }

  /** SIGKILLs every process of the program (its session, its sandbox, its cgroup). */
  #kill(): void {
    if (this.#terminating && this.#reaped === null) this.#killedWhileTerminating = true;
    this.#tree.kill();
  }

  #onEof(): void {
    this.#wakeRoomWaiters(); // Input can no longer be written: nobody waits for room.
    this.#deliver(this.#discard ? null : this.#chunker.end());
    this.#maybeFinish();
  }

  #maybeFinish(): void {
    if (this.#finished || !this.#reader.eof || this.#reaped === null || this.#snapshotsPending > 0) return;
    if (!this.#tree.initReaped) return; // leaderReaped's callback comes back here.
    if (!this.#reader.closable()) return; // The reader thread lets go of the terminal first: `released` comes back here.
    // `exit` promises that nothing of the session is left: a process killed a moment ago may still be
    // tearing down (its fds closed, so EOF came, but not yet dead). Kill again and look again shortly.
    if (performance.now() - this.#tree.lastKillAt < SWEEP_INTERVAL_MS) {
      // Give the kill a moment; sessions killed together then share the next /proc scan.
      this.#later(SWEEP_INTERVAL_MS, () => this.#maybeFinish());
      return;
    }
    const left = this.#tree.remaining();
    if (this.#sweeps < MAX_SWEEPS && left > 0) {
      this.#sweeps++;
      this.#kill();
      this.#later(SWEEP_INTERVAL_MS, () => this.#maybeFinish());
      return;
    }
    this.#finished = true;
    this.#ceilings.close(); // Empty now: its directories go.
    for (const timer of this.#timers) {
      clearTimeout(timer);
      clearInterval(timer);
    }
    this.#timers.clear();
    this.#quiet.stop();
    libc().sym.close(this.#master);
    this.#tree.close();
    const { code, signal } = this.#tree.exitStatus(this.#reaped);
    const frame = {
      seq: this.#seq++,
      ts: nowSeconds(),
      type: "exit",
      code,
      signal,
      timed_out: this.#timedOut,
      ...(this.#terminating
        ? { stop: this.#killedWhileTerminating ? "killed" as const : "graceful" as const }
        : {}),
      duration_ms: Math.round((performance.now() - this.#startedAt) * 1000) / 1000,
      last_lines: this.#tail.lastLines(),
      session: this.info,
      output_bytes: this.#outputBytes,
      ...protectedReport(this.launch.protectedWatch),
    } satisfies ExitFrame;
    this.#log.append(frame);
    this.#log.close();
    this.#wakeRoomWaiters();
    this.#recorder?.close();
    this.#resolveExited(frame);
  }

  // ── timers ──────────────────────────────────────────────────────────────────────────────────────

  #later(ms: number, fn: () => void): Timer {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      fn();
    }, ms);
    this.#timers.add(timer);
    return timer;
  }

  #clear(timer: Timer | undefined): void {
    if (timer === undefined) return;
    clearTimeout(timer);
    this.#timers.delete(timer);
  }
}
