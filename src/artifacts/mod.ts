/**
 * Run artifacts: the audit log (more artifacts arrive with scenarios).
 *
 * @module
 */
export { AUDIT_FILE, type AuditEvent, AuditLog, defaultArtifactsDir } from "./audit.ts";
export { ArtifactBundle, type ChecksumReport, checksums, CHECKSUMS_FILE, verifyChecksums } from "./bundle.ts";
