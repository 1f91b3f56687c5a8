/**
 * Which requests the listener answers at all, before any token is looked at:
 *
 * - `Host` must be one the daemon is reached by (its address, `localhost` for a loopback one, or an
 *   `--allow-host`): a page on an attacker's domain that rebinds its name to 127.0.0.1 sends its own name as
 *   `Host`, and is refused (DNS rebinding).
 * - `Origin`, when a browser sends one, must be this very site (`http(s)://` + the request's `Host`): a
 *   page of another site opening a WebSocket here (cross-site WebSocket hijacking) is refused even when it
 *   holds no token, so it learns nothing and cannot count as a failed attempt of the user's address.
 *   Non-browser clients send no `Origin`.
 *
 * @module
 */

/** The `host:port` names a listener on `hostname`:`port` answers to (lower case). */
export function allowedHosts(hostname: string, port: number, extra: readonly string[] = []): Set<string> {
  const out = new Set<string>();
  const add = (name: string) => {
    const host = name.toLowerCase();
    const bare = host.startsWith("[") ? host : host.includes(":") ? `[${host}]` : host;
    out.add(`${bare}:${port}`);
    if ((port === 80 || port === 443)) out.add(bare); // Browsers leave the default port out.
  };
  add(hostname);
  if (isLoopback(hostname)) { for (const name of ["127.0.0.1", "localhost", "[::1]"]) add(name); }
  for (const name of extra) {
    // An entry with its own port is taken as it is.
    if (/:\d+$/.test(name) && !name.endsWith("]")) out.add(name.toLowerCase());
    else add(name);
  }
  return out;
}

/** True for 127.0.0.0/8, ::1 and localhost. */
export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * Why a request is refused before its token is looked at, or null. `authority`: the request URL's host,
 * for HTTP/2, which carries it as `:authority` instead of a `Host` header.
 */
export function guardRequest(
  headers: Headers,
  hosts: ReadonlySet<string>,
  authority = "",
): "E_REMOTE_HOST" | "E_REMOTE_ORIGIN" | null {
  const host = (headers.get("host") ?? authority).toLowerCase();
  if (!hosts.has(host)) return "E_REMOTE_HOST";
  const origin = headers.get("origin");
  if (origin === null) return null;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return "E_REMOTE_ORIGIN"; // "null" (a sandboxed frame, a file: page) and garbage.
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "E_REMOTE_ORIGIN";
  return url.host.toLowerCase() === host ? null : "E_REMOTE_ORIGIN";
}
