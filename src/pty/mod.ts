/**
 * The PTY layer over libc (Deno FFI): terminals, spawning, the poll reactor, signals and reaping.
 *
 * @module
 */
export {
  decodeWaitStatus,
  type PlatformId,
  PLATFORMS,
  type PlatformTable,
  platformTable,
  signalName,
  type WaitStatus,
} from "./platform.ts";
export {
  getWindowSize,
  openPty,
  type PtyPair,
  setNonBlocking,
  setWindowSize,
  type SignalKeys,
  signalKeys,
  unixSocketPair,
} from "./pty.ts";
export {
  type InheritedFd,
  resolveProgram,
  type SpawnedChild,
  spawnOnPty,
  type SpawnRequest,
} from "./spawn.ts";
export { type PollClient, Reactor, reactor } from "./reactor.ts";
export { FD_STREAM_CHUNK, FdStream, MAX_QUEUED_BYTES } from "./fd_stream.ts";
export {
  ChildWatcher,
  childWatcher,
  type Disposition,
  type ExitWatcher,
  raiseOpenFileLimit,
  sendSignal,
  sessionMembers,
  signalDisposition,
  signalSession,
  type StatusListener,
} from "./process.ts";
export { contentFd, MAX_CONTENT_BYTES } from "./content_fd.ts";
export { listenInNetworkOf } from "./netns_listen.ts";
export { closeQuietly, libc } from "./_libc.ts";
export {
  LINUX_SOCKET,
  MAX_FDS_PER_MESSAGE,
  type PeerCredentials,
  peerCredentials,
  type ReceivedFds,
  receiveFds,
  sendFds,
  seqpacketPair,
} from "./fd_passing.ts";
export {
  closeChildEnds,
  closeGate,
  GATE_DEADLINE_MS,
  type GatePipes,
  openGate,
  readInfo,
  releaseGate,
  sleepMs,
  waitBlocked,
} from "./gate.ts";
export { treeUsage } from "./process.ts";
export {
  acceptUnix,
  connectUnix,
  LINUX_UNIX_SOCKET,
  listenUnix,
  MAX_SOCKET_PATH,
  shutdownWrite,
  tryLockFile,
} from "./unix_socket.ts";
export { type ReaderChannel, readerThread } from "./reader_thread.ts";
export {
  findSandboxInit,
  firstChildOf,
  holdSandboxInit,
  holdSubreaper,
  type SandboxInit,
  sandboxProgram,
  signalSandbox,
} from "./sandbox_processes.ts";
