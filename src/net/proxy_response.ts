/**
 * What the proxy answers a program it does not connect: a whole HTTP/1.1 response with a plain-text body
 * that says why (a person reads it in curl's output; an agent reads it in a tool result), an
 * `X-Proxy-Error` header a program can test (the values sandbox-runtime and Codex use), and
 * `Connection: close`. Pure.
 *
 * @module
 */
import type { NetRule } from "../policy/mod.ts";

/** The `X-Proxy-Error` values. */
export type ProxyError =
  | "blocked-by-allowlist"
  | "blocked-by-address"
  | "bad-request"
  | "head-too-large"
  | "head-timeout"
  | "resolve-failed"
  | "connect-failed"
  | "too-many-connections";

const REASONS: Readonly<Record<number, string>> = {
  400: "Bad Request",
  403: "Forbidden",
  408: "Request Timeout",
  431: "Request Header Fields Too Large",
  502: "Bad Gateway",
  503: "Service Unavailable",
};

const encoder = new TextEncoder();

/** The answer to a CONNECT the proxy made: the tunnel starts after it. */
export const CONNECT_ESTABLISHED: Uint8Array = encoder.encode("HTTP/1.1 200 Connection established\r\n\r\n");

/** A whole refusal: status line, `X-Proxy-Error`, a plain-text body (one line ending in a newline). */
export function refusalResponse(status: number, error: ProxyError, message: string): Uint8Array {
  const body = encoder.encode(`${message}\n`);
  const head = [
    `HTTP/1.1 ${status} ${REASONS[status] ?? "Error"}`,
    `X-Proxy-Error: ${error}`,
    "Content-Type: text/plain; charset=utf-8",
    `Content-Length: ${body.length}`,
    "Connection: close",
    "",
    "",
  ].join("\r\n");
  const top = encoder.encode(head);
  const out = new Uint8Array(top.length + body.length);
  out.set(top, 0);
  out.set(body, top.length);
  return out;
}

/** `host:port` as a person writes it (IPv6 in brackets). */
export function hostPort(host: string, port: number): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** The rules, as a short list for a message (the first 20, then how many more). */
function ruleList(rules: readonly NetRule[]): string {
  if (rules.length === 0) return "nothing";
  const shown = rules.slice(0, 20).map((rule) => `"${rule.text}"`).join(", ");
  return rules.length > 20 ? `${shown} and ${rules.length - 20} more` : shown;
}

/** The 403 body when no rule allows `host:port`. */
export function notAllowedMessage(
  policyName: string,
  host: string,
  port: number,
  rules: readonly NetRule[],
): string {
  return `Specter's network policy "${policyName}" does not allow "${hostPort(host, port)}"; allowed: ${
    ruleList(rules)
  }`;
}

/** The 403 body when a rule allows the name but none of the addresses it resolved to. */
export function refusedAddressMessage(
  policyName: string,
  host: string,
  port: number,
  rule: NetRule,
  addresses: readonly string[],
): string {
  const shown = addresses.slice(0, 4).map((address) => `"${address}"`).join(", ");
  return `Specter's network policy "${policyName}" allows "${hostPort(host, port)}" (rule "${rule.text}") ` +
    `but the name resolved to ${shown}: a loopback, private or link-local address the rule does not name ` +
    `(DNS rebinding or a private network); name the address in a rule to allow it`;
}
