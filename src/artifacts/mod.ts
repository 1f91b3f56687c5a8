/**
 * Run artifacts: the audit log (more artifacts arrive with scenarios).
 *
 * @module
 */
export { AUDIT_FILE, type AuditEvent, AuditLog, defaultArtifactsDir } from "./audit.ts";
export { ArtifactBundle, type ChecksumReport, checksums, CHECKSUMS_FILE, verifyChecksums } from "./bundle.ts";
export {
  AUDIT_EVENTS,
  AUDIT_GENESIS,
  AUDIT_MAX_BYTES,
  AuditRecordSchema,
  type ChainSummary,
  recordHash,
  verifyChain,
} from "./audit_chain.ts";
export { bundleDigest, MAX_BUNDLE_FILE_BYTES, REPLAY_DIR } from "./bundle.ts";
