/**
 * Building a session: each part with one concern (reader, input pump, flow control, budgets, quiet
 * watch, screen, frame log, wind-down, …) is made here and wired to the others, in an order where every
 * part a callback reaches exists by the time it can be called. Then the `start` frame (or, for a session
 * taken over from a previous host, its earlier frames replayed).
 *
 * @module
 */
import type { ExitFrame, Frame } from "../protocol/mod.ts";
import { payloadText } from "../frames/mod.ts";
import { childWatcher } from "../pty/mod.ts";
import type { Launched } from "../launch/mod.ts";
import type { CastWriter } from "../recording/mod.ts";
import { VERSION } from "../version.ts";
import { Budgets, reportedBefore } from "./budgets.ts";
import { FlowControl } from "./flow_control.ts";
import { FrameLog } from "./frame_log.ts";
import { InputPump, terminalWrite } from "./input_pump.ts";
import { TerminalReader } from "./terminal_reader.ts";
import { Timers } from "./timers.ts";
import { WindDown } from "./wind_down.ts";
import { QuietWatch } from "./quiet_watch.ts";
import type { ResolvedOptions } from "./options.ts";
import { OutputTail } from "./output_tail.ts";
import { SessionScreen } from "./session_screen.ts";
import { OutputPath } from "./output_path.ts";
import { SessionRecording } from "./session_recording.ts";
import { Termination } from "./termination.ts";
import { CommandMarks } from "./command_marks.ts";
import type { LaunchInfo } from "./launch_info.ts";
import type { SessionHooks } from "./session_hooks.ts";
import { emit, emitError, type SessionParts } from "./_session_parts.ts";
import { afterInput } from "./_session_input.ts";
import { fail, finish, onEof, onStatus } from "./_session_exit.ts";

/** {@link SessionParts} while it is built: each part is set once, in order. */
type Building = { -readonly [K in keyof SessionParts]: SessionParts[K] };

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
  p.recording = new SessionRecording(recorder, p.startedAt, (c, m, d) => emitError(p, c, m, d));
  p.end = new Termination({ tree: p.tree, later });
  p.info = {
    id: options.id,
    title: options.title,
    description: options.description,
    parent_agent: options.parentAgent,
  };
  p.tail = new OutputTail(options.lastLines);
  p.marks = new CommandMarks({
    emit: (body) => emit(p, body),
    now: () => performance.now(),
    prompt: () => p.quiet.promptMark(),
    ...(options.commandMarkNonce === null ? {} : { nonce: options.commandMarkNonce }),
  });
  p.log = new FrameLog({
    onDrain: () => p.flow.drained(),
    ...(hooks.resume === undefined ? {} : { first: hooks.resume.nextSeq }),
  });
  p.outputBase = hooks.resume?.outputOffset ?? 0;
  p.flow = new FlowControl(options, {
    emit: (body) => emit(p, body),
    later: (ms, fn) => p.timers.later(ms, fn),
    clear: (timer) => p.timers.clear(timer),
    kill: () => p.end.kill(),
    wake: () => p.reader.wake(),
    lagBytes: () => p.log.lagBytes,
    inputPending: () => p.pump.pending,
    ended: () => p.windDown.finished || p.reader.eof,
  });
  p.main = p.log.subscribe({ authoritative: true });
  p.output = new OutputPath({
    budgets: {
      admit: (bytes) => p.budgets.admit(bytes),
      outputExceeded: () => p.budgets.outputExceeded(),
    },
    flow: p.flow,
    activity: () => p.quiet.output(),
    emit: (body) => emit(p, body),
    text: (text) => {
      p.marks.output(text, p.seq - 1); // After its stdout frame: marks end in the frames after it.
      p.tail.push(text);
      p.screen.output(text);
      p.recording.event("o", text);
    },
  });
  p.quiet = new QuietWatch(options, {
    now: () => performance.now(),
    later,
    currentLine: () => p.tail.currentLine,
    emit: (event) => emit(p, event),
  });
  p.exited = new Promise<ExitFrame>((resolve) => p.resolveExited = resolve);
  p.screen = new SessionScreen(options, {
    emit: (body) => emit(p, body),
    pressure: (behind) => p.flow.backlog(behind),
    answered: () => p.windDown.check(),
  });

  if (hooks.resume === undefined) {
    emit(p, {
      type: "start",
      protocol: 1,
      version: VERSION,
      session: p.info,
      argv: [...options.argv],
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
  p.reader = new TerminalReader(p.io, options.readerThread, {
    output: (bytes) => p.output.read(bytes),
    eof: () => onEof(p),
    blocked: () => p.flow.blocked,
    wantsWrite: () => p.pump.waiting,
    writable: () => {
      p.pump.flush();
      afterInput(p);
    },
    fail: (error) => fail(p, error),
    released: () => p.windDown.check(),
    later,
  });
  p.windDown = new WindDown({
    tree: p.tree,
    reader: p.reader,
    blocked: () => p.flow.blocked,
    snapshotsPending: () => p.screen.owed,
    kill: () => p.end.kill(),
    later,
    finish: () => finish(p),
  });
  const { timeoutMs, maxOutputBytes, limits: { cpuSeconds } } = options;
  const budgetLimits = {
    timeoutMs,
    maxOutputBytes,
    cpuSeconds,
    outputBefore: p.outputBase,
    ...(hooks.resume === undefined ? {} : { before: reportedBefore(hooks.resume.history) }),
  };
  p.budgets = new Budgets(budgetLimits, launched.ceilings, {
    emit: (body) => emit(p, body),
    later,
    kill: () => p.end.kill(),
    terminate,
    reaped: () => p.reaped !== null,
    pid: child.pid,
  }, p.startedAt);
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
