/**
 * Specter's public API: start programs on real terminals and observe them as validated frames.
 *
 * @example
 * ```ts
 * import { spawn } from "./src/mod.ts";
 *
 * const session = spawn({ argv: ["bash", "--norc"], promptRegex: ["\\$ $"] });
 * let prompts = 0;
 * for await (const frame of session.frames()) {
 *   // Type at a prompt, as a person would: a ctrl-d typed while a command runs may be lost.
 *   if (frame.type === "prompt" && prompts++ === 0) session.write("echo hello\r");
 *   else if (frame.type === "prompt") session.press("ctrl-d");
 *   if (frame.type === "exit") console.log(frame.code, frame.last_lines);
 * }
 * ```
 *
 * @module
 */
export { encodeKey, KEY_NAMES, plainText, Session, spawn, stripAnsi, Transcript } from "./session/mod.ts";
export type { SpawnOptions, SubscribeOptions, Subscription } from "./session/mod.ts";
export { loadPolicy, PRESET_NAMES } from "./policy/mod.ts";
export type { Policy, PresetName } from "./policy/mod.ts";
export { loadScenario, parseScenario, runScenario } from "./scenario/mod.ts";
export type { LoadedScenario, RunScenarioOptions } from "./scenario/mod.ts";
export { decodeStream, encodeFrames, FRAMINGS } from "./frames/mod.ts";
export { DriverMessageSchema, FrameSchema, parseDriverLine, PROTOCOL_VERSION } from "./protocol/mod.ts";
export type { Framing } from "./frames/mod.ts";
export type {
  DriverMessage,
  ExitFrame,
  Frame,
  FrameType,
  SessionInfo,
  SignalName,
  StartFrame,
} from "./protocol/mod.ts";
export { snapshotText, TerminalModel, Watermarks } from "./terminal/mod.ts";
export { CellRunSchema, ScreenSnapshotSchema } from "./protocol/mod.ts";
export type { SnapshotOptions, TerminalModelOptions } from "./terminal/mod.ts";
export type { CellRun, Color, ScreenSnapshot } from "./protocol/mod.ts";
export {
  AuditError,
  ERROR_CODE_SINCE,
  ERROR_CODES,
  FileError,
  PolicyError,
  ProtocolError,
  SandboxError,
  SessionError,
  SpawnError,
  SpecterError,
  UsageError,
} from "./errors.ts";
export type { PolicyProblem } from "./errors.ts";
export { ExecResultSchema, RunResultSchema } from "./protocol/mod.ts";
export type { ExecResult, RunResult, StepResult } from "./protocol/mod.ts";
export type { ErrorCode } from "./errors.ts";
export { VERSION } from "./version.ts";
