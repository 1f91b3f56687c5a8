/**
 * The network relay (`specter net-relay`): a sandbox's `127.0.0.1:3128` copied to and from the run's proxy
 * on a unix socket. A folder of its own, importing nothing of Specter's, so the relay process (one per
 * sandbox with a network allow list, without root) loads only this.
 *
 * @module
 */
export {
  type NetRelayOptions,
  processStartTime,
  RELAY_MAX_CONNECTIONS,
  RELAY_PORT,
  runNetRelay,
} from "./net_relay.ts";
