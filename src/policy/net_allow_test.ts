import assert from "node:assert/strict";
import { addressAllowed, isSpecialAddress, matchNetRule, type NetRule, parseNetRule } from "./net_allow.ts";

function rule(text: string): NetRule {
  const parsed = parseNetRule(text);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.rule;
}

Deno.test("net rules: the spellings the issue names parse", () => {
  assert.deepEqual(rule("registry.npmjs.org"), {
    text: "registry.npmjs.org",
    kind: "name",
    host: "registry.npmjs.org",
    port: null,
  });
  assert.deepEqual(rule("*.pythonhosted.org:443"), {
    text: "*.pythonhosted.org:443",
    kind: "suffix",
    host: "pythonhosted.org",
    port: 443,
  });
  assert.deepEqual(rule("localhost:8080"), {
    text: "localhost:8080",
    kind: "name",
    host: "localhost",
    port: 8080,
  });
  assert.deepEqual(rule("10.1.2.3"), { text: "10.1.2.3", kind: "ipv4", host: "10.1.2.3", port: null });
  assert.deepEqual(rule("[::1]:5432"), { text: "[::1]:5432", kind: "ipv6", host: "::1", port: 5432 });
  assert.equal(rule("Example.COM.").host, "example.com");
  assert.equal(rule("[0:0::1]").host, "::1");
});

Deno.test("net rules: each malformed or too broad pattern is refused with its problem", () => {
  const cases: [string, string][] = [
    ["", "empty"],
    ["  ", "empty"],
    ["*", "wildcard_alone"],
    ["*:443", "wildcard_alone"],
    ["*.com", "wildcard_too_broad"],
    ["10.0.0.0/8", "range"],
    ["10.1.2.*", "range"],
    ["[fe80::/10]", "range"],
    ["https://example.com", "scheme_or_path"],
    ["example.com/path", "scheme_or_path"],
    ["exa*mple.com", "bad_host"],
    ["foo.*.com", "bad_host"],
    ["-bad.example", "bad_host"],
    ["bücher.de", "bad_host"],
    ["exa mple.org", "bad_host"],
    ["256.1.1.1", "bad_host"],
    ["1.2.3", "bad_host"],
    ["example.com:0", "bad_port"],
    ["example.com:65536", "bad_port"],
    ["example.com:http", "bad_port"],
    ["example.com:", "bad_port"],
    ["[::1]x", "bad_port"],
    ["::1", "bad_ipv6"],
    ["[::1", "bad_ipv6"],
    ["[not-v6]", "bad_ipv6"],
  ];
  for (const [text, problem] of cases) {
    const parsed = parseNetRule(text);
    assert.equal(parsed.ok, false, text);
    if (!parsed.ok) assert.equal(parsed.problem, problem, text);
  }
  const spaced = parseNetRule("exa mple.org");
  assert.ok(!spaced.ok && /white space/.test(spaced.message));
});

Deno.test("net rules: matching by name, suffix (subdomains only), address and port", () => {
  const rules = ["registry.npmjs.org", "*.pythonhosted.org:443", "localhost:8080", "10.1.2.3", "[::1]:5432"]
    .map(
      rule,
    );
  const allowed = (host: string, port: number) => matchNetRule(rules, host, port)?.text ?? null;
  assert.equal(allowed("registry.npmjs.org", 443), "registry.npmjs.org");
  assert.equal(allowed("REGISTRY.npmjs.org.", 80), "registry.npmjs.org");
  assert.equal(allowed("evil.registry.npmjs.org", 443), null, "a name rule is not a suffix rule");
  assert.equal(allowed("files.pythonhosted.org", 443), "*.pythonhosted.org:443");
  assert.equal(allowed("pythonhosted.org", 443), null, "the apex is not a subdomain");
  assert.equal(allowed("files.pythonhosted.org", 80), null);
  assert.equal(allowed("evilpythonhosted.org", 443), null);
  assert.equal(allowed("localhost", 8080), "localhost:8080");
  assert.equal(allowed("localhost", 8081), null);
  assert.equal(allowed("127.0.0.1", 8080), null, "an address is not the name that resolves to it");
  assert.equal(allowed("10.1.2.3", 22), "10.1.2.3");
  assert.equal(allowed("[::1]", 5432), "[::1]:5432");
  assert.equal(allowed("0:0::1", 5432), "[::1]:5432");
  assert.equal(allowed("not a host", 80), null);
});

Deno.test("net rules: special addresses (each range)", () => {
  for (
    const address of [
      "0.0.0.0",
      "127.0.0.1",
      "127.8.9.10",
      "10.0.0.1",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "224.0.0.1",
      "255.255.255.255",
      "::",
      "::1",
      "fc00::1",
      "fd12::1",
      "fe80::1",
      "ff02::1",
      "::ffff:127.0.0.1",
      "::ffff:169.254.169.254",
      "not an address",
    ]
  ) assert.equal(isSpecialAddress(address), true, address);
  for (const address of ["93.184.216.34", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8"]) {
    assert.equal(isSpecialAddress(address), false, address);
  }
});

Deno.test("net rules: a name rule may not lead to a special address unless it names it (DNS rebinding)", () => {
  assert.equal(addressAllowed(rule("example.com"), "93.184.216.34"), true);
  assert.equal(addressAllowed(rule("example.com"), "127.0.0.1"), false);
  assert.equal(addressAllowed(rule("*.example.com"), "169.254.169.254"), false);
  assert.equal(addressAllowed(rule("example.com"), "::ffff:10.0.0.1"), false);
  assert.equal(addressAllowed(rule("localhost:8080"), "127.0.0.1"), true);
  assert.equal(addressAllowed(rule("localhost:8080"), "::1"), true);
  assert.equal(addressAllowed(rule("localhost:8080"), "10.0.0.1"), false, "localhost is loopback only");
  assert.equal(addressAllowed(rule("10.1.2.3"), "10.1.2.3"), true, "the rule names the address");
  assert.equal(addressAllowed(rule("10.1.2.3"), "10.1.2.4"), false);
  assert.equal(addressAllowed(rule("[::1]"), "::1"), true);
});
