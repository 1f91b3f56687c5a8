import assert from "node:assert/strict";
import { UsageError } from "../errors.ts";
import { checkPolicyDocument, isValidatedPolicy, type PolicyContext, withAllowNet } from "./check.ts";
import { type NetRule, parseNetRule } from "./net_allow.ts";
import { parsePolicyText } from "./parse.ts";
import { MAX_NET_RULES } from "./schema.ts";
import { testPolicy } from "./_testing.ts";

const CTX: PolicyContext = {
  workspace: "/work/proj",
  home: "/home/me",
  acks: { unsafeWrite: false, network: true },
};

function check(network: unknown, ctx: PolicyContext = CTX) {
  return checkPolicyDocument({ version: 1, network }, "test", ctx);
}

function onlyProblem(network: unknown, ctx: PolicyContext = CTX) {
  const { policy, problems } = check(network, ctx);
  assert.equal(policy, null);
  assert.equal(problems.length, 1, JSON.stringify(problems));
  const problem = problems[0]!;
  // Every message names its field, in the style of the others.
  assert.ok(problem.message.includes(`"${problem.field}"`), problem.message);
  assert.match(problem.message, /^[A-Z]/);
  assert.doesNotMatch(problem.message, /\.$/);
  return problem;
}

Deno.test("an allow list becomes parsed rules, in the order written, with their text kept", () => {
  const { policy, problems } = check({
    allow: ["registry.npmjs.org", "*.pythonhosted.org:443", "localhost:8080", "10.1.2.3", "[::1]:5432"],
  });
  assert.deepEqual(problems, []);
  assert.ok(policy !== null && typeof policy.network === "object");
  assert.deepEqual(policy.network.allow.map((rule) => [rule.text, rule.kind, rule.host, rule.port]), [
    ["registry.npmjs.org", "name", "registry.npmjs.org", null],
    ["*.pythonhosted.org:443", "suffix", "pythonhosted.org", 443],
    ["localhost:8080", "name", "localhost", 8080],
    ["10.1.2.3", "ipv4", "10.1.2.3", null],
    ["[::1]:5432", "ipv6", "::1", 5432],
  ]);
  assert.ok(Object.isFrozen(policy.network.allow[0]));
});

Deno.test("a TOML policy file writes the allow list as a table", () => {
  const doc = parsePolicyText(
    'version = 1\n[network]\nallow = ["example.org:443"]\n',
    "toml",
    "file:/p.toml",
  );
  const { policy } = checkPolicyDocument(doc, "file:/p.toml", CTX);
  assert.ok(policy !== null && typeof policy.network === "object");
  assert.equal(policy.network.allow[0]!.text, "example.org:443");
});

Deno.test("E_POLICY_NETWORK_ACK: an allow list needs --ack-network, as network on does", () => {
  const problem = onlyProblem({ allow: ["example.org"] }, {
    ...CTX,
    acks: { unsafeWrite: false, network: false },
  });
  assert.equal(problem.code, "E_POLICY_NETWORK_ACK");
  assert.equal(problem.field, "network");
  assert.match(problem.message, /allows 1 host pattern\(s\).*--ack-network/);
});

Deno.test("E_POLICY_NET_EMPTY: an empty allow list", () => {
  const problem = onlyProblem({ allow: [] });
  assert.equal(problem.code, "E_POLICY_NET_EMPTY");
  assert.equal(problem.field, "network.allow");
  assert.match(problem.message, /"network": "off"/);
});

Deno.test("E_POLICY_NET_RULE: each refused pattern class, named with its reason", () => {
  const cases: [string, RegExp][] = [
    ["*", /"\*" alone/],
    ["*:443", /"\*" alone/],
    ["*.com", /top-level domain/],
    ["10.0.0.0/8", /address range/],
    ["10.1.2.*", /address range/],
    ["[fe80::/10]", /address range/],
    ["https://example.org", /scheme or a path/],
    ["example.org/path", /scheme or a path/],
    ["exa_mple.org", /not a DNS name/],
    [`${"a".repeat(301)}.example`, /longer than 300 characters/],
    ["bücher.de", /punycode/],
    ["example.org:0", /port outside/],
    ["example.org:70000", /port outside/],
    ["::1", /in brackets/],
    ["[::1", /does not close/],
    ["", /is empty/],
    ["999.1.1.1", /not an IPv4 address/],
  ];
  for (const [pattern, reason] of cases) {
    const problem = onlyProblem({ allow: ["ok.example", pattern] });
    assert.equal(problem.code, "E_POLICY_NET_RULE", pattern);
    assert.equal(problem.field, "network.allow[1]");
    assert.match(problem.message, reason, pattern);
    assert.match(problem.message, /^Field "network\.allow\[1\]" is refused: network rule /);
  }
});

Deno.test("every bad rule is reported, in document order", () => {
  const { problems } = check({ allow: ["*", "good.example", "*.org"] });
  assert.deepEqual(problems.map((p) => [p.code, p.field]), [
    ["E_POLICY_NET_RULE", "network.allow[0]"],
    ["E_POLICY_NET_RULE", "network.allow[2]"],
  ]);
});

Deno.test("the allow table's shape: unknown keys, wrong types, a list over the cap", () => {
  const unknown = onlyProblem({ allow: ["a.example"], deny: ["b.example"] });
  assert.equal(unknown.code, "E_POLICY_UNKNOWN_KEY");
  assert.equal(unknown.field, "network.deny");
  assert.match(unknown.message, /known keys in "network": "allow"/);
  const notList = onlyProblem({ allow: "a.example" });
  assert.equal(notList.code, "E_POLICY_SCHEMA");
  assert.equal(notList.field, "network.allow");
  const notString = onlyProblem({ allow: [5] });
  assert.equal(notString.code, "E_POLICY_SCHEMA");
  assert.equal(notString.field, "network.allow[0]");
  const tooMany = onlyProblem({
    allow: Array.from({ length: MAX_NET_RULES + 1 }, (_, i) => `h${i}.example`),
  });
  assert.equal(tooMany.code, "E_POLICY_SCHEMA");
  assert.match(tooMany.message, new RegExp(`at most ${MAX_NET_RULES}`));
  const missing = onlyProblem({});
  assert.equal(missing.code, "E_POLICY_SCHEMA");
  assert.equal(missing.field, "network.allow");
});

Deno.test("withAllowNet: replaces network off, adds to a list without duplicates, stays validated", () => {
  const off = checkPolicyDocument({ version: 1 }, "preset:test", CTX).policy!;
  const widened = withAllowNet(off, [rule("a.example"), rule("a.example")]);
  assert.ok(isValidatedPolicy(widened));
  assert.ok(Object.isFrozen(widened));
  assert.deepEqual(widened.network, { allow: [rule("a.example")] });
  assert.equal(off.network, "off");
  const listed = check({ allow: ["a.example", "b.example:443"] }).policy!;
  const merged = withAllowNet(listed, [rule("b.example:443"), rule("c.example")]);
  assert.ok(typeof merged.network === "object");
  assert.deepEqual(merged.network.allow.map((r) => r.text), ["a.example", "b.example:443", "c.example"]);
  // Key order is the policy's own: the fingerprint hashes it.
  assert.deepEqual(Object.keys(merged), Object.keys(listed));
});

Deno.test("withAllowNet refuses network on, a hand-made policy and a list over the cap", () => {
  const on = check("on").policy!;
  assert.throws(() => withAllowNet(on, [rule("a.example")]), (e: unknown) => {
    assert.ok(e instanceof UsageError);
    assert.equal(e.code, "E_USAGE");
    assert.match(e.message, /network is "on"/);
    return true;
  });
  assert.throws(() => withAllowNet(testPolicy(), [rule("a.example")]), UsageError);
  const full = check({ allow: Array.from({ length: MAX_NET_RULES }, (_, i) => `h${i}.example`) }).policy!;
  assert.throws(() => withAllowNet(full, [rule("a.example")]), /at most 256/);
});

function rule(text: string): NetRule {
  const parsed = parseNetRule(text);
  assert.ok(parsed.ok);
  return parsed.rule;
}
