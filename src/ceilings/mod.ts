/**
 * Resource ceilings a session's whole process tree cannot leak out of: its own cgroup where the host
 * allows it, a pid-namespace sampler otherwise, and which mechanism held each ceiling.
 *
 * @module
 */
export {
  type Breach,
  type CeilingLimits,
  type CeilingName,
  Ceilings,
  type CgroupMode,
  chooseMechanisms,
  type EnforcedBy,
  kernelEnforces,
  type Mechanism,
  MECHANISMS,
} from "./ceilings.ts";
export { LAUNCHER_TASKS, SessionCgroup, type SessionCgroupPlacement, SPECTER_GROUP } from "./cgroup.ts";
export {
  CGROUP_CEILINGS,
  type CgroupCeiling,
  cgroupDir,
  CONTROLLER_OF,
  isSessionCgroupName,
  ownerOf,
  parseCgroupMounts,
  parseKeyed,
  parseNumber,
  parseProcCgroup,
  placeCeilings,
  sessionCgroupName,
} from "./cgroup_host.ts";
export { namespaceMembers, parseStat, pidNamespace, usageOf } from "./pidns_usage.ts";
