/**
 * Remote access to the daemon: the TCP listener with its web viewer and WebSocket (`specter daemon
 * --bind`), tokens and their scopes, the Host/Origin guard, failed-attempt limits, and the peer interface
 * the daemon serves unix and WebSocket clients through.
 *
 * @module
 */
export { type Access, LOCAL_ACCESS, type Peer, type PeerHost } from "./peer.ts";
export { HARD_WS_UNSENT, MAX_IN_FLIGHT, MAX_WS_UNSENT, STALL_MS, WsPeer } from "./ws_peer.ts";
export { MAX_MESSAGE_BYTES } from "./ws_socket.ts";
export { CONNECTS_PER_MINUTE, MAX_CONNECTIONS, MAX_PER_ADDRESS, TOTAL_UNSENT } from "./server.ts";
export { DEFAULT_MAX_CLIENTS, RemoteServer, type RemoteServerOptions } from "./server.ts";
export { type Grant, newToken, readTokenFile, TokenSet } from "./tokens.ts";
export { RemoteError } from "./errors.ts";
export { allowedHosts, guardRequest, isLoopback } from "./guard.ts";
export { FailureLimiter } from "./limiter.ts";
export { type HttpHandler, type HttpReply, type HttpRequest, MAX_BODY_BYTES } from "./http_route.ts";
