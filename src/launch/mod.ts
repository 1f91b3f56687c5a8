/**
 * The launch step: a {@link LaunchPlan} becomes a running process on a new terminal (through bwrap's
 * gate when sandboxed), and its processes are controlled through a {@link ProcessTree}, so that a session
 * never needs to know which sandbox backend ran its program.
 *
 * @module
 */
export { cgroupMode, launch, type Launched, type LaunchRequest } from "./launch.ts";
export { waitsForInput } from "./input_wait.ts";
export {
  type Delivered,
  INIT_REAP_MS,
  LAUNCHER_EXIT_MS,
  ProcessTree,
  type ProcessTreeOptions,
} from "./process_tree.ts";
export {
  findNsenter,
  listening,
  type NetRelay,
  type NetRelayRequest,
  RELAY_READY_MS,
  relayArgv,
  startNetRelay,
} from "./net_bridge.ts";
