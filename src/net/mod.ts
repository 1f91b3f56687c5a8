/**
 * The network proxy of an allow-list policy (`"network": {"allow": […]}`, `--allow-net`): an HTTP proxy
 * (CONNECT tunnels and plain `http://` requests) on a unix socket, which allows only the hosts and ports
 * the policy names, resolves names itself and refuses addresses a rule does not allow (DNS rebinding),
 * and reports every connection, allowed or refused, as one `net` event at its close. Between `policy/` and
 * `protocol/` below and the session, CLI and daemon above.
 *
 * @module
 */
export { DEFAULT_MAX_CONNECTIONS, NetProxy, type NetProxyOptions } from "./net_proxy.ts";
export { CONNECT_TIMEOUT_MS, RESOLVE_TIMEOUT_MS, type Resolver, systemResolve } from "./dial.ts";
export {
  type ConnectRequest,
  HEAD_TIMEOUT_MS,
  type HttpRequest,
  MAX_HEAD_BYTES,
  parseProxyHead,
  type ProxyHeadParse,
} from "./proxy_head.ts";
export { type HeadRead, readProxyHead } from "./read_head.ts";
export { type ProxyError } from "./proxy_response.ts";
