/**
 * Run artifacts: the audit log and the scenario bundle (their formats are in `protocol/`).
 *
 * @module
 */
export { AUDIT_FILE, AuditLog, defaultArtifactsDir, defaultRunsDir } from "./audit.ts";
export { ArtifactBundle, type ChecksumReport, checksums, CHECKSUMS_FILE, verifyChecksums } from "./bundle.ts";
export { AUDIT_GENESIS, AUDIT_MAX_BYTES, type ChainSummary, recordHash, verifyChain } from "./audit_chain.ts";
export { bundleDigest, MAX_BUNDLE_FILE_BYTES, REPLAY_DIR } from "./bundle.ts";
