/**
 * From an allowed host to a connection: resolve the name once (getaddrinfo through `node:dns`, so
 * /etc/hosts counts; an address literal needs no lookup), keep only the addresses the rule allows
 * (`addressAllowed`: a public name that resolves to loopback, a private network or link-local is refused,
 * the DNS-rebinding case), and connect to exactly one of those addresses. The name is never resolved
 * again between the check and the connect, so what was checked is what is reached.
 *
 * @module
 */
import { lookup } from "node:dns/promises";
import { TIMED_OUT, within } from "../clock.ts";
import { addressAllowed, canonicalHost, type NetRule } from "../policy/mod.ts";
import { closeQuietly } from "./tunnel.ts";

/** Resolves a name to its addresses (as text). */
export type Resolver = (host: string) => Promise<string[]>;

/** How long a name may take to resolve. */
export const RESOLVE_TIMEOUT_MS = 10_000;
/** How long one connect may take. */
export const CONNECT_TIMEOUT_MS = 10_000;
/** At most this many of a name's allowed addresses are tried, one after the other. */
const MAX_TRIES = 4;

/** getaddrinfo, as `node:dns` `lookup(host, {all: true})` calls it: /etc/hosts first, then DNS. */
export async function systemResolve(host: string): Promise<string[]> {
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map((entry) => entry.address);
}

/** What dialling gave. */
export type Dialled =
  | { readonly ok: true; readonly conn: Deno.TcpConn; readonly address: string }
  | {
    readonly ok: false;
    /** `address`: resolved only to refused addresses (403); `resolve`, `connect`: failed (502). */
    readonly kind: "address" | "resolve" | "connect" | "stopped";
    readonly reason: string;
    /** The first refused address, or the last address tried; null when there was none. */
    readonly address: string | null;
    /** What the name resolved to (for the 403's body). */
    readonly addresses: readonly string[];
  };

function message(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const text = error instanceof Error ? error.message : String(error);
  return typeof code === "string" && !text.includes(code) ? `${code}: ${text}` : text;
}

/** The canonical text of an address a resolver gave, or null when it is not an IP address. */
function canonicalAddress(address: string): string | null {
  const canonical = canonicalHost(address);
  return canonical === null || canonical.kind === "name" ? null : canonical.host;
}

/**
 * Resolves `host` (when it is a name), checks its addresses against `rule` and connects to the first
 * allowed one that answers. `stop` ends waiting (the proxy is closing). Never throws.
 */
export async function dialChecked(
  rule: NetRule,
  host: string,
  hostKind: "name" | "ipv4" | "ipv6",
  port: number,
  resolve: Resolver,
  stop: Promise<unknown>,
): Promise<Dialled> {
  const stopped = stop.then(() => "stopped" as const);
  let resolved: string[];
  if (hostKind === "name") {
    try {
      const answer = await within(Promise.race([resolve(host), stopped]), RESOLVE_TIMEOUT_MS);
      if (answer === "stopped") return fail("stopped", "the proxy stopped", null, []);
      if (answer === TIMED_OUT) {
        return fail("resolve", `"${host}" did not resolve within ${RESOLVE_TIMEOUT_MS} ms`, null, []);
      }
      resolved = answer;
    } catch (error: unknown) {
      return fail("resolve", `"${host}" did not resolve: ${message(error)}`, null, []);
    }
  } else resolved = [host];
  // A resolver's answer is input too: anything but an IP address is dropped, duplicates once.
  const addresses = [...new Set(resolved.map((a) => canonicalAddress(String(a))).filter((a) => a !== null))];
  if (addresses.length === 0) return fail("resolve", `"${host}" resolved to no address`, null, []);
  const allowed = addresses.filter((address) => addressAllowed(rule, address));
  if (allowed.length === 0) {
    return fail(
      "address",
      `"${host}" resolved to ${addresses.slice(0, 4).map((a) => `"${a}"`).join(", ")}, which the rule ` +
        `"${rule.text}" does not allow (loopback, private or link-local)`,
      addresses[0]!,
      addresses,
    );
  }
  let last = "";
  let tried = allowed[0]!;
  for (const address of allowed.slice(0, MAX_TRIES)) {
    tried = address;
    const pending = Deno.connect({ hostname: address, port, transport: "tcp" });
    try {
      const conn = await within(Promise.race([pending, stopped]), CONNECT_TIMEOUT_MS);
      if (conn !== TIMED_OUT && conn !== "stopped") return { ok: true, conn, address };
      // The connect may still complete: its connection is closed then, never used.
      pending.then(closeQuietly, () => {});
      if (conn === "stopped") return fail("stopped", "the proxy stopped", address, addresses);
      last = `no answer within ${CONNECT_TIMEOUT_MS} ms`;
    } catch (error: unknown) {
      last = message(error);
    }
  }
  return fail("connect", `connecting to "${tried}" port ${port} failed: ${last}`, tried, addresses);
}

function fail(
  kind: "address" | "resolve" | "connect" | "stopped",
  reason: string,
  address: string | null,
  addresses: readonly string[],
): Dialled {
  return { ok: false, kind, reason, address, addresses };
}
