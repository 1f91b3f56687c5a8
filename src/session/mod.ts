/**
 * Sessions: a program on its own terminal, driven by input and observed as frames.
 *
 * @module
 */
export { type SessionHost, spawn } from "./spawn_session.ts";
export { adopt, type AdoptedTerminal } from "./adopt.ts";
export { defaultSandbox, platformBackend } from "./default_sandbox.ts";
export { type PreparedLaunch, prepareLaunch, type PrepareOptions } from "./prepare_launch.ts";
export { Session, type SessionHooks } from "./session.ts";
export { CommandMarks } from "./command_marks.ts";
export type { LaunchInfo } from "./launch_info.ts";
export { defaultEnv, DEFAULTS, type ResolvedOptions, resolveOptions, type SpawnOptions } from "./options.ts";
export { encodeKey, KEY_NAMES, type KeyModes } from "./keys.ts";
export { CursorKeyMode, OutputTail } from "./output_tail.ts";
export { FrameLog, type SubscribeOptions, type Subscription } from "./frame_log.ts";
export { plainText, stripAnsi } from "./plain_text.ts";
export { type PlainTextSink, PlainTextStream } from "./plain_text_stream.ts";
export { Transcript } from "./transcript.ts";
export { auditError, auditFrame, auditLaunch, type RunAudit } from "./session_audit.ts";
export { CommandRows, type CommandRowsContext } from "./command_rows.ts";
export { type SandboxOption } from "./options.ts";
export { defaultPersistRoot, defaultSocketPath, defaultStateDir, specterStateDirs } from "./state_dirs.ts";
