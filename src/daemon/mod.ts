/**
 * The per-user daemon: named sessions that outlive their clients and the daemon itself (a keeper holds
 * their terminals), each with a durable frame log.
 *
 * @module
 */
export {
  FrameStore,
  type FrameStoreOptions,
  listSegments,
  type LogLine,
  type LogRecord,
  readLog,
  type ReadLogOptions,
  readLogText,
  type Recovery,
  type SyncPolicy,
} from "./frame_store.ts";
export {
  AgentOutputLogs,
  DEFAULT_SESSION_LOG_BYTES,
  DEFAULT_TOTAL_LOG_BYTES,
  OUTPUT_LOG_SEGMENT_BYTES,
  type OutputLogBudgets,
} from "./agent_output_log.ts";
export {
  type CreateParams,
  Daemon,
  type DaemonOptions,
  type RemoteListen,
  type SessionNet,
} from "./daemon.ts";
export { authorize, LOCAL_METHODS, VIEWER_METHODS } from "./remote_access.ts";
export { defaultPersistRoot, defaultSocketPath, defaultStateDir, privateDir, sessionDir } from "./paths.ts";
export { HARD_UNSENT_BYTES, MAX_LINE_BYTES, MAX_UNSENT_BYTES, STALL_MS } from "./connection.ts";
export { AUTOSTART_TIMEOUT_MS, type ConnectOptions, DaemonClient } from "./client.ts";
export { ownProcessProblem, readOwnFile, type TrustProblem } from "./trust.ts";
