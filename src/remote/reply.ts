/**
 * What the listener answers over plain HTTP: the security headers of every answer, and a refusal's
 * status and body (`{"error": {code, message}}`).
 *
 * @module
 */
import { REMOTE_REFUSALS, type RemoteRefusal } from "../protocol/mod.ts";

/** Every answer's headers: no framing, no sniffing, no referrer, only this origin's scripts. */
export const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; " +
    "style-src 'self' 'unsafe-inline'; connect-src 'self' blob: data:; img-src 'self' data: blob:; " +
    "font-src 'self' data:; worker-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "x-frame-options": "DENY",
};

/** The challenge of a 401. */
export const AUTHENTICATE = { "www-authenticate": 'Bearer realm="specter"' };

/** An HTTP answer. */
export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** A refused request: its status, and `{"error": {code, message}}`. */
export function refusal(
  code: RemoteRefusal,
  message: string,
  status?: number,
  extra: Record<string, string> = {},
): Reply {
  return {
    status: status ?? REMOTE_REFUSALS[code],
    headers: {
      ...SECURITY_HEADERS,
      ...extra,
      "content-type": "application/json",
      "cache-control": "no-store",
    },
    body: JSON.stringify({ error: { code, message } }) + "\n",
  };
}
