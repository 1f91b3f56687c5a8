/**
 * Sandboxes: launch plans (bubblewrap argv + seccomp, Seatbelt profiles), the realisation of a policy as
 * opened descriptors, the check of a sandbox's mounts, host probes and plan fingerprints.
 *
 * @module
 */
export { guardArtifacts } from "./artifact_guard.ts";
export { guardPolicyFile } from "./policy_file_guard.ts";
export { checkInterpreter, interpreterOf } from "./interpreter.ts";
export { ETC_BINDS, ETC_NETWORK_BINDS, ETC_PROXY_BINDS, SANDBOX_ID, SYSTEM_BINDS } from "./bwrap.ts";
export {
  NET_PROXY_ENV,
  NET_PROXY_PORT,
  NET_PROXY_URL,
  netProxyOf,
  type NetProxyPlan,
  withProxyEnv,
} from "./net_proxy.ts";
export { fingerprintPlan, type PlanFingerprint, REDACTED, redactedArgv, sha256 } from "./fingerprint.ts";
export { seccompOptionsOf } from "./host_sockets.ts";
export { checkMounts, parseMountInfo } from "./mount_check.ts";
export {
  compileLaunchPlan,
  DATA_ROOT,
  type DataFile,
  type LaunchPlan,
  type LaunchRequest,
  type PlanDescriptor,
  programCommand,
  programLaunchers,
  type SandboxBackend,
} from "./plan.ts";
export { PERSIST_HOME } from "./launch_plan.ts";
export { findPrlimit, findSetsid, hostFacts, probeBwrap, probeRoot } from "./probe.ts";
export { type ProtectedWatch } from "./protected_walk.ts";
export { type RealizedPolicy, realizePolicy } from "./realize.ts";
export {
  coverSecrets,
  SECRET_PATHS,
  secretHomes,
  type SecretMasks,
  secretMasks,
  type SecretPath,
} from "./secrets.ts";
export { attachForRoot, idmapNamespace, ROOT_SANDBOX_UIDS, rootSandboxUid } from "./root_mapping.ts";
export { ATTACH_ROOT, MountAttachments } from "./mount_attachments.ts";
export { SANDBOX_EXEC } from "./seatbelt/mod.ts";
export {
  describeRules,
  type RuleDescription,
  rulesFor,
  type SeccompArch,
  seccompArchFor,
} from "./seccomp/mod.ts";
