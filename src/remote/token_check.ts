/**
 * `GET /v1/token`: whether a page's token still holds. A browser's WebSocket never sees its handshake's 401
 * (only a close, code 1006, as for a daemon that is gone), so a page whose connection failed asks here and
 * can say which it was: its token was revoked (or the daemon was given new ones), or the daemon is away.
 *
 * @module
 */
import type { RemoteRefusal } from "../protocol/mod.ts";
import type { RequestHead } from "./http_head.ts";
import type { FailureLimiter } from "./limiter.ts";
import type { TokenSet } from "./tokens.ts";
import { AUTHENTICATE, refusal, type Reply, SECURITY_HEADERS } from "./reply.ts";

/**
 * Answers `GET /v1/token`: 204 when the bearer token holds; 401 when it does not (a failed attempt of the
 * address, as on the WebSocket: `limiter` may lock it out); 429 while the address is locked out. `refused`
 * records a refusal in the audit log (never the token).
 */
export function checkToken(
  head: RequestHead,
  address: string,
  limiter: FailureLimiter,
  tokens: TokenSet,
  refused: (code: RemoteRefusal, noToken: boolean) => void,
): Reply {
  if (head.method !== "GET") return refusal("E_USAGE", `Method ${head.method} is not served here`, 405);
  const locked = limiter.lockedFor(address);
  if (locked > 0) {
    return refusal("E_REMOTE_LIMITED", "Too many failed attempts: try again later", undefined, {
      "retry-after": String(Math.ceil(locked / 1000)),
    });
  }
  const authorization = head.repeated.has("authorization") ? null : head.headers.get("authorization");
  const token = authorization !== null && /^bearer /i.test(authorization)
    ? authorization.slice(7).trim()
    : "";
  if (token === "") {
    refused("E_REMOTE_AUTH", true);
    return refusal("E_REMOTE_AUTH", "A token is required", undefined, AUTHENTICATE);
  }
  if (token.length > 1024 || tokens.check(token) === null) {
    const lock = limiter.fail(address);
    refused(lock > 0 ? "E_REMOTE_LIMITED" : "E_REMOTE_AUTH", false);
    return refusal("E_REMOTE_AUTH", "The token is not valid", undefined, AUTHENTICATE);
  }
  return { status: 204, headers: { ...SECURITY_HEADERS, "cache-control": "no-store" }, body: "" };
}
