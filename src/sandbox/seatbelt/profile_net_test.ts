/**
 * The Seatbelt profile of an allow-list policy, as text (these tests never run sandbox-exec: they only
 * check what the profile says).
 */
import assert from "node:assert/strict";
import { type NetRule, parseNetRule } from "../../policy/mod.ts";
import { testPolicy } from "../../policy/_testing.ts";
import type { LaunchRequest } from "../plan.ts";
import { parseRules, type Rule } from "./_testing.ts";
import { seatbeltProfile } from "./profile.ts";

const request: LaunchRequest = {
  program: "/usr/bin/curl",
  args: [],
  cwd: "/Users/me/project",
  env: { HOME: "/Users/me" },
};

function rule(text: string): NetRule {
  const parsed = parseNetRule(text);
  assert.ok(parsed.ok);
  return parsed.rule;
}

const allowList = testPolicy({ network: { allow: [rule("registry.npmjs.org"), rule("localhost:8080")] } });

function networkRules(rules: readonly Rule[]): string[] {
  return rules.filter((r) => r.operations.some((op) => op.startsWith("network"))).map((r) =>
    `${r.action} ${r.operations.join(" ")} ${r.filters.map((f) => `${f.kind}=${f.value}`).join(" ")}`.trim()
  );
}

Deno.test("seatbelt, allow list: every network operation denied, then outbound to the proxy's port only", () => {
  const profile = seatbeltProfile(allowList, request);
  const rules = parseRules(profile);
  assert.deepEqual(networkRules(rules), [
    "deny network*",
    "allow network-outbound remote ip=localhost:3128",
  ]);
  // The proxy's rule is the profile's last (the last matching rule wins: nothing after can undo it).
  assert.deepEqual(rules.at(-1), {
    action: "allow",
    operations: ["network-outbound"],
    filters: [{ kind: "remote ip", value: "localhost:3128", regex: null, symbol: null }],
  });
  assert.ok(profile.trimEnd().endsWith('(allow network-outbound (remote ip "localhost:3128"))'));
  // Never a wildcard address, never inbound.
  assert.doesNotMatch(profile, /\(local ip/);
  assert.doesNotMatch(profile, /"\*:\*"|"\*:3128"|"localhost:\*"/);
  assert.doesNotMatch(profile, /network-inbound|network-bind/);
});

Deno.test("seatbelt, allow list: TLS certificates and trustd, no resolver files or DNS configuration", () => {
  const profile = seatbeltProfile(allowList, request);
  assert.match(profile, /\(subpath "\/private\/etc\/ssl"\)/);
  assert.match(profile, /"com\.apple\.trustd\.agent"/);
  for (
    const absent of ["resolv.conf", "/private/etc/hosts", "DNSConfiguration", "SystemConfiguration.configd"]
  ) {
    assert.ok(!profile.includes(absent), absent);
  }
});

Deno.test("seatbelt: network off and on are as before (no proxy rule)", () => {
  for (const network of ["off", "on"] as const) {
    const profile = seatbeltProfile(testPolicy({ network }), request);
    assert.doesNotMatch(profile, /remote ip/, network);
  }
});
