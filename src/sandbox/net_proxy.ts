/**
 * What a launch plan says about the network proxy of an allow-list policy: the loopback port inside the
 * sandbox where programs find it, and the environment that points them there.
 *
 * Under bwrap each sandbox has its own network namespace, so every sandbox can use the same port: a relay
 * started in that namespace listens on `127.0.0.1:3128` and carries each connection to Specter's proxy
 * outside (the relay and the proxy are not planned here). Programs find the proxy through the usual
 * variables; `NO_PROXY` is empty so no name is tried directly (nothing could answer: there is no DNS and no
 * route out). The variables override any the caller gave with `--env` or the policy passes through: a
 * proxy elsewhere could not be reached, and a `NO_PROXY` list would only make requests fail differently.
 *
 * @module
 */
import type { Policy } from "../policy/mod.ts";

/** The proxy's port on the sandbox's loopback (the relay inside listens there). */
export const NET_PROXY_PORT = 3128;

/** The proxy's address as the environment names it. */
export const NET_PROXY_URL = `http://127.0.0.1:${NET_PROXY_PORT}`;

/** What a plan says about the proxy: `null` when the policy has no allow list. */
export type NetProxyPlan = { readonly port: number } | null;

/** The proxy of `policy`'s plan: the port for an allow list, otherwise `null`. */
export function netProxyOf(policy: Pick<Policy, "network"> | null): NetProxyPlan {
  return policy !== null && typeof policy.network === "object" ? { port: NET_PROXY_PORT } : null;
}

/**
 * The variables every program under an allow list gets. `ALL_PROXY` covers tools that read only it (an
 * HTTP proxy URL: curl then tunnels with CONNECT); `NODE_USE_ENV_PROXY=1` makes Node's own fetch and http
 * use the variables (Node 24 and later).
 */
export const NET_PROXY_ENV: Readonly<Record<string, string>> = Object.freeze({
  HTTP_PROXY: NET_PROXY_URL,
  HTTPS_PROXY: NET_PROXY_URL,
  ALL_PROXY: NET_PROXY_URL,
  http_proxy: NET_PROXY_URL,
  https_proxy: NET_PROXY_URL,
  all_proxy: NET_PROXY_URL,
  NO_PROXY: "",
  no_proxy: "",
  NODE_USE_ENV_PROXY: "1",
});

/** `env` with the proxy's variables when `proxy` is set (they win over the caller's), else `env` itself. */
export function withProxyEnv(
  env: Readonly<Record<string, string>>,
  proxy: NetProxyPlan,
): Readonly<Record<string, string>> {
  return proxy === null ? env : { ...env, ...NET_PROXY_ENV };
}
