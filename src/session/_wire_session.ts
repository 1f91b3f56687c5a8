/**
 * Building a session: each part with one concern (reader, input pump, flow control, budgets, quiet
 * watch, screen, frame log, wind-down, …) is made here and wired to the others, in an order where every
 * part a callback reaches exists by the time it can be called. Then the `start` frame (or, for a session
 * taken over from a previous host, its earlier frames replayed).
 *
 * @module
 */
import type { ExitFrame, Frame, FrameBody } from "../protocol/mod.ts";
import { payloadText } from "../frames/mod.ts";
import { childWatcher } from "../pty/mod.ts";
import type { Launched } from "../launch/mod.ts";
import type { CastWriter } from "../recording/mod.ts";
import { VERSION } from "../version.ts";
import { type BudgetHost, Budgets, reportedBefore } from "./budgets.ts";
import { FlowControl, type FlowHost } from "./flow_control.ts";
import { FrameLog } from "./frame_log.ts";
import { InputPump, terminalWrite } from "./input_pump.ts";
import { TerminalReader, type TerminalReaderHooks } from "./terminal_reader.ts";
import { Timers } from "./timers.ts";
import { WindDown, type WindDownHost } from "./wind_down.ts";
import { type QuietHost, QuietWatch } from "./quiet_watch.ts";
import type { ResolvedOptions } from "./options.ts";
import { OutputTail } from "./output_tail.ts";
import { SessionScreen, type SessionScreenHost } from "./session_screen.ts";
import { type OutputHost, OutputPath } from "./output_path.ts";
import { SessionRecording } from "./session_recording.ts";
import { Termination, type TerminationHost } from "./termination.ts";
import { CommandMarks, type CommandMarksHost } from "./command_marks.ts";
import type { LaunchInfo } from "./launch_info.ts";
import type { SessionHooks } from "./session_hooks.ts";
import { emit, emitError, type SessionParts } from "./_session_parts.ts";
import { afterInput } from "./_session_input.ts";
import { fail, finish, onEof, onStatus } from "./_session_exit.ts";

/** {@link SessionParts} while it is built: each part is set once, in order. */
type Building = { -readonly [K in keyof SessionParts]: SessionParts[K] };

/** The recording of every session that records nothing (it holds no state then: one serves them all). */
const NO_RECORDING = new SessionRecording(null, 0, () => {});

/**
 * The host of every part (the flow, the budgets, the reader, the wind-down, …): ONE object per session,
 * its methods on a prototype all sessions share. A host literal of arrow functions per part cost about
 * 3 KiB per session (some 40 closures and 12 objects), and a thousand idle sessions live in one process
 * (issue 27). Everything it reads is read when called, so the parts may be built in any order.
 */
class PartsHost
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
  readonly #p: Building;
  readonly #terminate: () => void;
  constructor(p: Building, terminate: () => void) {
    this.#p = p;
    this.#terminate = terminate;
  }
  // Termination, WindDown, Budgets, OutputPath and CommandMarks read these.
  get tree(): Building["tree"] {
    return this.#p.tree;
  }
  get reader(): TerminalReader {
    return this.#p.reader;
  }
  get pid(): number {
    return this.#p.pid;
  }
  get budgets(): Budgets {
    return this.#p.budgets;
  }
  get flow(): FlowControl {
    return this.#p.flow;
  }
  get nonce(): string | undefined {
    return this.#p.options.commandMarkNonce ?? undefined;
  }
  // Frames and time.
  emit(body: FrameBody): void {
    emit(this.#p, body);
  }
  later(ms: number, fn: () => void): ReturnType<Timers["later"]> {
    return this.#p.timers.later(ms, fn);
  }
  clear(timer: ReturnType<Timers["later"]> | undefined): void {
    this.#p.timers.clear(timer);
  }
  now(): number {
    return performance.now();
  }
  // The program's end.
  kill(): void {
    this.#p.end.kill();
  }
  terminate(): void {
    this.#terminate();
  }
  reaped(): boolean {
    return this.#p.reaped !== null;
  }
  finish(): void {
    finish(this.#p);
  }
  // Flow control and the reader.
  wake(): void {
    this.#p.reader.wake();
  }
  lagBytes(): number {
    return this.#p.log.lagBytes;
  }
  inputPending(): number {
    return this.#p.pump.pending;
  }
  ended(): boolean {
    return this.#p.windDown.finished || this.#p.reader.eof;
  }
  blocked(): boolean {
    return this.#p.flow.blocked;
  }
  pressure(behind: boolean): void {
    this.#p.flow.backlog(behind);
  }
  output(bytes: Uint8Array): void {
    this.#p.output.read(bytes);
  }
  eof(): void {
    onEof(this.#p);
  }
  wantsWrite(): boolean {
    return this.#p.pump.waiting;
  }
  writable(): void {
    this.#p.pump.flush();
    afterInput(this.#p);
  }
  fail(error: unknown): void {
    fail(this.#p, error);
  }
  released(): void {
    this.#p.windDown.check();
  }
  answered(): void {
    this.#p.windDown.check();
  }
  snapshotsPending(): number {
    return this.#p.screen.owed;
  }
  // Output text, quiet and prompts.
  activity(): void {
    this.#p.quiet.output();
  }
  text(text: string): void {
    const p = this.#p;
    p.marks.output(text, p.seq - 1); // After its stdout frame: marks end in the frames after it.
    p.tail.push(text);
    p.screen.output(text);
    p.recording.event("o", text);
  }
  currentLine(): string {
    return this.#p.tail.currentLine;
  }
  prompt(): void {
    this.#p.quiet.promptMark();
  }
}

/**
 * Makes the parts of a session and wires them together. `terminate` ends the program gracefully (the
 * session's own `terminate()`, which the wall clock calls). The exit watcher is not started yet: see
 * {@link watchSession}.
 */
export function wireSession(
  launched: Launched,
  options: ResolvedOptions,
  recorder: CastWriter | null,
  launch: LaunchInfo,
  hooks: SessionHooks,
  terminate: () => void,
): SessionParts {
  // Every callback below reads `p` when it is called, as the parts it reaches exist by then.
  const p = { seq: 0, reaped: null } as unknown as Building;
  const started = hooks.resume?.started;
  p.startedAt = started === undefined
    ? performance.now()
    : performance.now() - Math.max(0, Date.now() - started * 1000);
  const later = (ms: number, fn: () => void) => void p.timers.later(ms, fn);
  const child = launched.child;
  p.timers = new Timers();
  p.sink = hooks.sink ?? null;
  p.watcher = launched.watcher ?? childWatcher();
  p.launch = launch;
  p.ceilings = launched.ceilings;
  p.tree = launched.processTree(later);
  p.options = options;
  p.master = child.master;
  // Without a terminal (`tty: false`) the program's fds are a socket: its input and output go there.
  p.io = child.io ?? child.master;
  p.ownSocket = options.tty === false && child.io !== undefined && launched.watcher === undefined &&
    hooks.resume === undefined;
  p.endInput = hooks.endInput ?? null;
  p.pump = new InputPump(terminalWrite(p.io));
  // Its input ended under the previous host: nothing more may be typed.
  if (hooks.resume?.inputClosed === true) p.pump.end(() => {});
  p.pid = child.pid;
  p.recording = recorder === null
    ? NO_RECORDING
    : new SessionRecording(recorder, p.startedAt, (c, m, d) => emitError(p, c, m, d));
  const host = new PartsHost(p, terminate);
  p.end = new Termination(host);
  p.info = {
    id: options.id,
    title: options.title,
    description: options.description,
    parent_agent: options.parentAgent,
  };
  p.tail = new OutputTail(options.lastLines);
  p.marks = new CommandMarks(host);
  p.log = new FrameLog({
    onDrain: () => p.flow.drained(),
    ...(hooks.resume === undefined ? {} : { first: hooks.resume.nextSeq }),
  });
  p.outputBase = hooks.resume?.outputOffset ?? 0;
  p.flow = new FlowControl(options, host);
  p.main = p.log.subscribe({ authoritative: true });
  p.output = new OutputPath(host);
  p.quiet = new QuietWatch(options, host);
  p.exited = new Promise<ExitFrame>((resolve) => p.resolveExited = resolve);
  p.screen = new SessionScreen(options, host);

  if (hooks.resume === undefined) {
    emit(p, {
      type: "start",
      protocol: 1,
      version: VERSION,
      session: p.info,
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
    p.seq = hooks.resume.nextSeq;
    replay(p, hooks.resume.history);
  }
  p.reader = new TerminalReader(p.io, options.readerThread, host);
  p.windDown = new WindDown(host);
  const { timeoutMs, maxOutputBytes, limits: { cpuSeconds } } = options;
  const budgetLimits = {
    timeoutMs,
    maxOutputBytes,
    cpuSeconds,
    outputBefore: p.outputBase,
    ...(hooks.resume === undefined ? {} : { before: reportedBefore(hooks.resume.history) }),
  };
  p.budgets = new Budgets(budgetLimits, launched.ceilings, host, p.startedAt);
  return p;
}

/**
 * Starts what reports to a built session: the heartbeat, and (last) the exit watcher, so a status
 * already there is reported at once to a session whose parts all exist.
 */
export function watchSession(p: SessionParts): void {
  if (p.options.heartbeatMs > 0) p.timers.every(p.options.heartbeatMs, () => emit(p, { type: "ping" }));
  p.watcher.watch(p.pid, (status, at) => onStatus(p, status, at));
}

/** A resumed session's earlier frames rebuild what later frames depend on: the tail and the screen. */
function replay(p: SessionParts, history: readonly Frame[]): void {
  for (const frame of history) {
    if (frame.type === "stdout") {
      const text = payloadText(
        frame.binary === true ? { data: frame.data, binary: true } : { data: frame.data, binary: false },
      );
      p.tail.push(text);
      p.screen.output(text);
    } else if (frame.type === "resize") {
      p.screen.resize(frame.cols, frame.rows);
    }
  }
}
