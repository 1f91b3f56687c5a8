/**
 * The frame protocol: every event Specter emits about a session, as a zod discriminated union. This file
 * is the single source of truth; `spec/schema/frame.schema.json` is generated from it
 * (`deno task schema`). Frames only gain optional fields from version 1 on.
 *
 * @module
 */
import { z } from "zod";
import { ScreenSnapshotSchema } from "./screen.ts";
import { SIGNAL_NAMES } from "./signals.ts";
import { netEventFields } from "./net.ts";

/** Version of the frame and driver protocol. */
export const PROTOCOL_VERSION = 1;

/** A signal name without the `SIG` prefix. */
export const SignalNameSchema: z.ZodEnum<{ [K in typeof SIGNAL_NAMES[number]]: K }> = z.enum(SIGNAL_NAMES);

const base = {
  /** Per-session sequence number, strictly increasing from 0: the offset clients seek by. */
  seq: z.int().nonnegative(),
  /** Wall-clock time of the event, seconds since the Unix epoch with microsecond precision. */
  ts: z.number().nonnegative(),
};

/** Who a session is for; absent values are `null`. */
export const SessionInfoSchema = z.object({
  id: z.string().min(1).describe("Session id, unique per process run"),
  title: z.string().nullable().describe("--title, or null"),
  description: z.string().nullable().describe("--description, or null"),
  parent_agent: z.string().nullable().describe("--parent-agent, or null"),
});
/** Session metadata carried by `start` and `exit`. */
export type SessionInfo = z.infer<typeof SessionInfoSchema>;

/** Terminal output bytes: UTF-8 text, or base64 with `binary: true` when the chunk is not valid UTF-8. */
const dataFields = {
  data: z.string().describe("UTF-8 text, or base64 when binary is true"),
  binary: z.literal(true).optional().describe("Present (true) only when data is base64"),
};

/** The session has started. */
export const StartFrameSchema = z.object({
  ...base,
  type: z.literal("start"),
  protocol: z.literal(PROTOCOL_VERSION),
  version: z.string().describe("Specter version"),
  session: SessionInfoSchema,
  argv: z.array(z.string()).min(1).describe("The program (absolute path) and its arguments"),
  cwd: z.string(),
  cols: z.int().positive(),
  rows: z.int().positive(),
  pid: z.int().positive(),
  sandbox: z.string().optional().describe("Sandbox backend in force: bwrap, seatbelt, external or none"),
  policy: z.string().optional().describe('The policy enforced, e.g. "preset:strict" or "file:/abs/path"'),
  artifacts: z.string().optional().describe("Directory holding this run's audit log and other artifacts"),
});

/** Output of the program. A multi-byte character is never split across frames. */
export const StdoutFrameSchema = z.object({ ...base, type: z.literal("stdout"), ...dataFields });

/** Echo of input the driver sent (after key names were encoded). */
export const StdinFrameSchema = z.object({
  ...base,
  type: z.literal("stdin"),
  ...dataFields,
  key: z.string().optional().describe("The key name, when the input came from a key message"),
});

/** A resize was requested. */
export const ResizeFrameSchema = z.object({
  ...base,
  type: z.literal("resize"),
  cols: z.int().positive(),
  rows: z.int().positive(),
});

/** The terminal now has this size (the child received SIGWINCH). */
export const ResizeAckFrameSchema = z.object({
  ...base,
  type: z.literal("resize_ack"),
  cols: z.int().positive(),
  rows: z.int().positive(),
});

/** A `--prompt-regex` matched the current line after output settled. */
export const PromptFrameSchema = z.object({
  ...base,
  type: z.literal("prompt"),
  regex: z.string().describe(
    'The prompt pattern the line matched, or "OSC 133;A" when the shell marked its prompt itself',
  ),
  line: z.string().describe("The current line, ANSI-stripped"),
});

/** No output for `dur_ms` milliseconds (emitted once per quiet period). */
export const IdleFrameSchema = z.object({ ...base, type: z.literal("idle"), dur_ms: z.int().nonnegative() });

/** A budget on output was exceeded; the session is being killed. */
export const OverflowFrameSchema = z.object({
  ...base,
  type: z.literal("overflow"),
  reason: z.enum(["buffer", "max_output", "lagged"]).describe(
    "buffer: the frame consumer stayed behind for --overflow-timeout; max_output: --max-output was reached; " +
      "lagged: this subscriber fell behind the frame log, which no longer holds missed_from … missed_to " +
      "(the overflow frame takes the seq of the last one)",
  ),
  limit: z.int().nonnegative().optional(),
  missed_from: z.int().nonnegative().optional().describe("lagged: the first seq this subscriber missed"),
  missed_to: z.int().nonnegative().optional().describe("lagged: the last seq this subscriber missed"),
});

/** The reasons a resource ceiling ends a session. */
export const CAPSULE_KILL_REASONS = ["memory", "cpu", "wall", "processes", "output"] as const;

/**
 * What enforced a resource ceiling: the session's cgroup (v1 or v2), a sampler over the sandbox's pid
 * namespace or (without a sandbox) the terminal's session, or a per-process rlimit.
 */
export const CEILING_MECHANISMS = [
  "cgroup-v1",
  "cgroup-v2",
  "pidns-sampler",
  "session-sampler",
  "rlimit",
] as const;

/** A resource ceiling was breached: the whole process tree is being killed; `exit` follows. */
export const CapsuleKillFrameSchema = z.object({
  ...base,
  type: z.literal("capsule_kill"),
  reason: z.enum(CAPSULE_KILL_REASONS),
  limit: z.number().nonnegative().describe("The ceiling: bytes, CPU seconds, milliseconds or processes"),
  value: z.number().nonnegative().optional().describe("What was measured when it was breached"),
  enforced_by: z.enum(CEILING_MECHANISMS).optional().describe(
    "What enforced the memory, cpu or processes ceiling (absent for wall and output, which Specter's clock and reader enforce)",
  ),
});

/** A signal was sent to the program on the driver's request. */
export const SignalFrameSchema = z.object({
  ...base,
  type: z.literal("signal"),
  signal: SignalNameSchema,
  pid: z.int(),
  delivered_as: SignalNameSchema.optional().describe(
    "The signal actually sent when it differs (TSTP with default action goes as STOP: the orphaned group would drop it)",
  ),
});

/** The program (the direct child) was stopped. */
export const StoppedFrameSchema = z.object({
  ...base,
  type: z.literal("stopped"),
  signal: SignalNameSchema.nullable(),
});

/** The program (the direct child) was continued. */
export const ContinuedFrameSchema = z.object({ ...base, type: z.literal("continued") });

/** The session is over: output drained to EOF, the child reaped, no process of the session left. */
export const ExitFrameSchema = z.object({
  ...base,
  type: z.literal("exit"),
  code: z.int().nullable().describe("Exit code, or null when the program died of a signal"),
  signal: SignalNameSchema.or(z.string()).nullable().describe("Terminating signal, or null"),
  timed_out: z.boolean(),
  duration_ms: z.number().nonnegative(),
  last_lines: z.array(z.string()).describe("Last lines of output, ANSI-stripped; empty when there was none"),
  session: SessionInfoSchema,
  output_bytes: z.int().nonnegative().optional().describe("Bytes of output read from the terminal"),
  protected_created: z.array(z.string()).optional().describe(
    "Strict-write: protected names (.git, .envrc, …) the run created under its write roots (reported, not prevented)",
  ),
  protected_unchecked: z.array(z.string()).optional().describe(
    "Strict-write: why a write root could not be walked again after the run (a walk cap); absent when none",
  ),
  stop: z.enum(["graceful", "killed"]).optional().describe(
    "Present when Specter stopped the program (terminate, SIGINT/SIGTERM/SIGHUP to Specter, --timeout): graceful, it ended within the grace period after SIGHUP/SIGTERM; killed, it was SIGKILLed when the grace period ran out (or at once)",
  ),
});

/** Who can have reported a `command` frame's facts (see {@link CommandFrameSchema}). */
export const REPORTERS = ["shell", "output"] as const;

/**
 * A command finished, as the shell marked it (OSC 133: `C` when it started, `D;STATUS` when it finished).
 * New in 0.7.0; emitted only for shells with shell integration (see spec/agent.md).
 */
export const CommandFrameSchema = z.object({
  ...base,
  type: z.literal("command"),
  command: z.string().optional().describe("The command line as typed, when Specter saw it typed"),
  exit_code: z.int().nullable().describe("The status the shell reported, or null when it reported none"),
  duration_ms: z.number().nonnegative().describe("From the command's start mark to its end mark"),
  output_from_seq: z.int().nonnegative().describe("First frame of the command's output"),
  output_to_seq: z.int().nonnegative().describe("Last frame of the command's output"),
  reported_by: z.enum(REPORTERS).default("output").describe(
    "Who reported the command's end and status: shell (Specter's integration, whose marks carry a nonce " +
      "that only the shell holds), or output (marks without it, which any program in the session can print). " +
      "Either way a claim of the shell's, never the kernel's: a program's own exit code is in exit",
  ),
});

/** Something went wrong; the session goes on unless an `exit` follows. */
export const ErrorFrameSchema = z.object({
  ...base,
  type: z.literal("error"),
  code: z.string().regex(/^E_[A-Z_]+$/),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});

/** Heartbeat (`--heartbeat`). */
export const PingFrameSchema = z.object({ ...base, type: z.literal("ping") });

/** Answer to a driver `ping`, echoing its `id`. */
export const PongFrameSchema = z.object({
  ...base,
  type: z.literal("pong"),
  id: z.union([z.string(), z.number()]).optional(),
});

/** The screen, answering a driver `snapshot` message once everything read before it was parsed. */
export const SnapshotFrameSchema = z.object({
  ...base,
  type: z.literal("snapshot"),
  name: z.string().optional().describe("The name given in the snapshot message"),
  screen: ScreenSnapshotSchema,
});

/**
 * The program of a daemon session exited: the notice a viewer shows (new in 0.8.0, an optional frame
 * type). The daemon sends it to every remote (WebSocket) client watching the session right after its `exit` frame (with
 * that frame's `seq`), and after the logged frames of a session that had already ended; it is derived
 * from the `exit` frame and is not logged itself.
 */
export const PtyExitedFrameSchema = z.object({
  ...base,
  type: z.literal("pty_exited"),
  session_id: z.string().min(1).describe("The session's name (a daemon session's id)"),
  exit_code: z.int().nullable().describe("The exit code, or null when the program died of a signal"),
  signal: z.string().nullable().optional().describe("The terminating signal, or null"),
  last_lines: z.array(z.string()).describe("Last lines of output, ANSI-stripped"),
  session_title: z.string().nullable(),
  session_description: z.string().nullable(),
  parent_agent: z.string().nullable(),
  timed_out: z.boolean().describe("The session's --timeout ended it"),
});

/**
 * One connection a sandboxed program made through the network proxy of an allow-list policy, allowed or
 * refused, at its close (an optional frame type, new with the network allow list: only runs with
 * `"network": {"allow": …}` send it). The same facts as the run's `net` audit record.
 */
export const NetFrameSchema = z.object({ ...base, type: z.literal("net"), ...netEventFields });

/** Any frame. */
export const FrameSchema = z.discriminatedUnion("type", [
  StartFrameSchema,
  StdoutFrameSchema,
  StdinFrameSchema,
  ResizeFrameSchema,
  ResizeAckFrameSchema,
  PromptFrameSchema,
  IdleFrameSchema,
  OverflowFrameSchema,
  CapsuleKillFrameSchema,
  SignalFrameSchema,
  StoppedFrameSchema,
  ContinuedFrameSchema,
  ExitFrameSchema,
  CommandFrameSchema,
  ErrorFrameSchema,
  PingFrameSchema,
  PongFrameSchema,
  SnapshotFrameSchema,
  PtyExitedFrameSchema,
  NetFrameSchema,
]);

/** Any frame. */
export type Frame = z.infer<typeof FrameSchema>;
/** The `type` of a frame. */
export type FrameType = Frame["type"];
/** The frame of a given `type`. */
export type FrameOf<T extends FrameType> = Extract<Frame, { type: T }>;
/** A frame before `seq` and `ts` are assigned. */
export type FrameBody = Frame extends infer F ? F extends Frame ? Omit<F, "seq" | "ts"> : never : never;
/** `start` frame. */
export type StartFrame = FrameOf<"start">;
/** `exit` frame. */
export type ExitFrame = FrameOf<"exit">;
/** `pty_exited` frame. */
export type PtyExitedFrame = FrameOf<"pty_exited">;
/** `net` frame. */
export type NetFrame = FrameOf<"net">;
