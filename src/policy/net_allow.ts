/**
 * Network allow-list rules (`"network": { "allow": [...] }`, `--allow-net`): parsing, matching a request's
 * host and port, and deciding whether an address a name resolved to may be used.
 *
 * A rule is `HOST[:PORT]` in Deno's `--allow-net` spelling: a DNS name (`registry.npmjs.org`), a
 * subdomain pattern (`*.pythonhosted.org`: subdomains only, never the name itself, as sandbox-runtime
 * does; list the apex too when it is wanted), an IPv4 address (`10.1.2.3`) or a bracketed IPv6 address
 * (`[::1]`). Without a port every port is allowed. Names are compared in lower case without a trailing
 * dot. Refused: `*` alone, a pattern over a single label (`*.com`), address ranges (`10.0.0.0/8`,
 * `10.1.2.*`), schemes and paths, non-ASCII names (give the punycode), ports outside 1–65535.
 *
 * Pure: no I/O. The proxy resolves names; {@link addressAllowed} says whether a resolved address may be
 * used for a rule (DNS rebinding: a public name that resolves to a loopback, private or link-local address
 * is refused unless the rule named that address, or `localhost`, itself).
 *
 * @module
 */

/** Why a pattern was refused (stable, used in policy problems and usage errors). */
export type NetRuleProblem =
  | "empty"
  | "wildcard_alone"
  | "wildcard_too_broad"
  | "range"
  | "scheme_or_path"
  | "bad_host"
  | "bad_port"
  | "bad_ipv6";

/** One parsed allow-list rule. */
export interface NetRule {
  /** The rule as written (trimmed), for audit records and messages. */
  readonly text: string;
  /** `name`: exact DNS name; `suffix`: `*.name` (subdomains only); `ipv4`/`ipv6`: an address literal. */
  readonly kind: "name" | "suffix" | "ipv4" | "ipv6";
  /** The name (lower case, no trailing dot; for `suffix` without the `*.`) or the canonical address. */
  readonly host: string;
  /** The port, or null for every port. */
  readonly port: number | null;
}

/** The outcome of parsing one pattern. */
export type NetRuleParse =
  | { readonly ok: true; readonly rule: NetRule }
  | { readonly ok: false; readonly problem: NetRuleProblem; readonly message: string };

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

function refuse(problem: NetRuleProblem, text: string, why: string): NetRuleParse {
  return { ok: false, problem, message: `Network rule "${text.slice(0, 200)}" ${why}` };
}

/** A DNS name in canonical form, or null. */
function dnsName(text: string): string | null {
  const name = text.toLowerCase().replace(/\.$/, "");
  if (name.length === 0 || name.length > 253) return null;
  const labels = name.split(".");
  if (!labels.every((label) => LABEL.test(label))) return null;
  // All-numeric names are addresses (or malformed ones): never names.
  if (labels.every((label) => /^\d+$/.test(label))) return null;
  return name;
}

/** The canonical text of an IPv6 address (as the WHATWG URL parser writes it), or null. */
export function canonicalIpv6(text: string): string | null {
  if (!/^[0-9a-fA-F:.]+$/.test(text) || !text.includes(":")) return null;
  try {
    const host = new URL(`http://[${text}]/`).hostname;
    return host.slice(1, -1);
  } catch {
    return null; // Not an IPv6 address.
  }
}

/** Parses one `HOST[:PORT]` pattern. */
export function parseNetRule(input: string): NetRuleParse {
  const text = input.trim();
  if (text.length === 0) return refuse("empty", text, "is empty");
  if (text.length > 300) return refuse("bad_host", text, "is longer than 300 characters");
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text) || text.includes("/") && !text.startsWith("[")) {
    return text.includes("/") && !/:\/\//.test(text) && /^[\d.]+\/\d+$/.test(text)
      ? refuse("range", text, "is an address range: name each address (ranges are not supported)")
      : refuse("scheme_or_path", text, "has a scheme or a path: give HOST or HOST:PORT only");
  }
  let host = text;
  let portText: string | null = null;
  if (text.startsWith("[")) {
    const close = text.indexOf("]");
    if (close < 0) return refuse("bad_ipv6", text, "opens a bracket it does not close");
    host = text.slice(1, close);
    const rest = text.slice(close + 1);
    if (rest.length > 0) {
      if (!rest.startsWith(":")) return refuse("bad_port", text, 'has text after "]" that is not ":PORT"');
      portText = rest.slice(1);
    }
    if (host.includes("/")) return refuse("range", text, "is an address range: name each address");
    const address = canonicalIpv6(host);
    if (address === null) return refuse("bad_ipv6", text, "is not an IPv6 address in brackets");
    return withPort(text, "ipv6", address, portText);
  }
  const colons = text.split(":").length - 1;
  if (colons > 1) {
    return refuse("bad_ipv6", text, "looks like an IPv6 address: write it in brackets, [::1]:PORT");
  }
  if (colons === 1) {
    host = text.slice(0, text.indexOf(":"));
    portText = text.slice(text.indexOf(":") + 1);
  }
  if (host === "*") {
    return refuse("wildcard_alone", text, 'is "*" alone: name the hosts (or use "network": "on")');
  }
  if (host.includes("*")) {
    if (!host.startsWith("*.") || host.slice(2).includes("*")) {
      return /^[\d.*]+$/.test(host)
        ? refuse("range", text, "is an address range: name each address (ranges are not supported)")
        : refuse("bad_host", text, 'has "*" other than as a leading "*." label');
    }
    const name = dnsName(host.slice(2));
    if (name === null) return refuse("bad_host", text, "is not *. followed by a DNS name");
    if (!name.includes(".")) {
      return refuse("wildcard_too_broad", text, "matches every name under a top-level domain: name a domain");
    }
    return withPort(text, "suffix", name, portText);
  }
  if (/^[\d.]+$/.test(host)) {
    if (!IPV4.test(host)) return refuse("bad_host", text, "is not an IPv4 address");
    return withPort(text, "ipv4", host, portText);
  }
  if (/\s/.test(host)) return refuse("bad_host", text, "contains white space");
  if (/[^\x21-\x7e]/.test(host)) {
    return refuse("bad_host", text, "has characters outside ASCII: give the name in punycode (xn--…)");
  }
  const name = dnsName(host);
  if (name === null) return refuse("bad_host", text, "is not a DNS name, an IPv4 address or [IPv6]");
  return withPort(text, "name", name, portText);
}

function withPort(text: string, kind: NetRule["kind"], host: string, portText: string | null): NetRuleParse {
  let port: number | null = null;
  if (portText !== null) {
    if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
      return refuse("bad_port", text, "has a port outside 1–65535");
    }
    port = Number(portText);
  }
  return { ok: true, rule: Object.freeze({ text, kind, host, port }) };
}

/** The canonical form of a request's host (as a client wrote it in CONNECT or a URL), or null if malformed. */
export function canonicalHost(host: string): { kind: "name" | "ipv4" | "ipv6"; host: string } | null {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (bare.includes(":")) {
    const address = canonicalIpv6(bare);
    return address === null ? null : { kind: "ipv6", host: address };
  }
  if (/^[\d.]+$/.test(bare)) return IPV4.test(bare) ? { kind: "ipv4", host: bare } : null;
  const name = dnsName(bare);
  return name === null ? null : { kind: "name", host: name };
}

/** The first rule that allows `host:port`, or null. `host` as a client wrote it (case, brackets, dot). */
export function matchNetRule(rules: readonly NetRule[], host: string, port: number): NetRule | null {
  const wanted = canonicalHost(host);
  if (wanted === null) return null;
  for (const rule of rules) {
    if (rule.port !== null && rule.port !== port) continue;
    switch (rule.kind) {
      case "name":
      case "ipv4":
      case "ipv6":
        if (wanted.kind === rule.kind && wanted.host === rule.host) return rule;
        break;
      case "suffix":
        if (wanted.kind === "name" && wanted.host.endsWith(`.${rule.host}`)) return rule;
        break;
    }
  }
  return null;
}

/** The IPv4 address an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) stands for, else the input. */
function unmapped(address: string): string {
  const canonical = address.includes(":") ? canonicalIpv6(address) ?? address : address;
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (mapped === null) return canonical;
  const high = parseInt(mapped[1]!, 16);
  const low = parseInt(mapped[2]!, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/**
 * Whether an address is one a public name must not lead to: unspecified, loopback, private (RFC 1918,
 * unique local), carrier-grade NAT, link-local (cloud metadata at 169.254.169.254), multicast, broadcast.
 */
export function isSpecialAddress(address: string): boolean {
  const ip = unmapped(address);
  if (IPV4.test(ip)) {
    const [a, b] = ip.split(".").map(Number) as [number, number];
    return a === 0 || a === 10 || a === 127 || a >= 224 || (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127);
  }
  const v6 = canonicalIpv6(ip);
  if (v6 === null) return true; // Not an address we understand: never connect to it.
  const first = parseInt(v6.split(":")[0] || "0", 16);
  return v6 === "::" || v6 === "::1" || (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 ||
    (first & 0xff00) === 0xff00;
}

/**
 * Whether the proxy may connect to `address` (what the rule's host resolved to) for `rule`. A rule that
 * names an address, or `localhost`, allows it; a rule by name allows only addresses that are not
 * {@link isSpecialAddress}: an allowed public name that resolves to loopback, a private network or
 * link-local (DNS rebinding, cloud metadata) is refused.
 */
export function addressAllowed(rule: NetRule, address: string): boolean {
  const ip = unmapped(address);
  if (rule.kind === "ipv4" || rule.kind === "ipv6") return unmapped(rule.host) === ip;
  if (rule.kind === "name" && rule.host === "localhost") {
    return ip === "::1" || (IPV4.test(ip) && ip.startsWith("127."));
  }
  return !isSpecialAddress(ip);
}
