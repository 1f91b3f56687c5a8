/**
 * Safe file access by descriptor: paths resolved without following symlinks (`openat2` with
 * `RESOLVE_NO_SYMLINKS` / `RESOLVE_BENEATH`), checked and read through the same descriptor, with size
 * caps and typed errors (`E_PATH_*`, `E_FILE_*`). Linux only; elsewhere calls throw `E_FILE_UNSUPPORTED`.
 *
 * @module
 */
export {
  closeFd,
  type FdInfo,
  fdInfo,
  fdProcPath,
  type FileKind,
  openBeneath,
  openNoFollow,
  openNoSymlinks,
  openProcessRoot,
} from "./open.ts";
export type { OpenOptions } from "./open.ts";
export {
  openDirectory,
  readFd,
  readFileBeneath,
  type ReadLimits,
  readRegularFile,
  reopenForReading,
} from "./read.ts";
export { isDiskFull, LineFile, writeFileWhole } from "./write.ts";
export {
  type FileBeneath,
  makeDirsBeneath,
  openFileBeneath,
  openWriteDir,
  type WriteDirOptions,
  type WriteFileOptions,
  writerTrust,
} from "./write_beneath.ts";
export { MAX_LINK_HOPS, openTrusted, rootOnlyLink, type TrustedPath } from "./trusted.ts";
export {
  ancestorIdentities,
  type FsLocation,
  fsLocation,
  locatedWithin,
  MAX_ANCESTORS,
  mountTable,
  reopenFd,
} from "./ancestors.ts";
export { isWithin } from "./within.ts";
export { SERVICE_LOG_BYTES, ServiceLog } from "./service_log.ts";
export { walkBeneath, type WalkEntry } from "./walk.ts";
export { insideTree, SYSTEM_TREES, systemTreeOf } from "./system_trees.ts";
