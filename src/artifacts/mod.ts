/**
 * Run artifacts: the audit log (more artifacts arrive with scenarios).
 *
 * @module
 */
export { AUDIT_FILE, type AuditEvent, AuditLog, defaultArtifactsDir } from "./audit.ts";
