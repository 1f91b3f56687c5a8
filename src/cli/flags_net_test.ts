import assert from "node:assert/strict";
import { join } from "node:path";
import { PolicyError, UsageError } from "../errors.ts";
import { isValidatedPolicy, type Policy } from "../policy/mod.ts";
import { allowNetRules, type FlagValues, sandboxOption } from "./flags.ts";
import { exitCodeForError } from "./exit_codes.ts";

const CWD = "/work/proj";

function policyOf(values: FlagValues): Policy {
  const option = sandboxOption(values, CWD);
  assert.ok(option.mode === "auto" || option.mode === "bwrap" || option.mode === "seatbelt");
  return option.policy;
}

function allowTexts(policy: Policy): string[] | string {
  return typeof policy.network === "object" ? policy.network.allow.map((rule) => rule.text) : policy.network;
}

Deno.test("--allow-net: comma lists and repeats make the preset's allow list", () => {
  const policy = policyOf({
    "allow-net": ["registry.npmjs.org,*.pythonhosted.org:443", " localhost:8080 ", "[::1]:5432"],
    "ack-network": true,
  });
  assert.deepEqual(allowTexts(policy), [
    "registry.npmjs.org",
    "*.pythonhosted.org:443",
    "localhost:8080",
    "[::1]:5432",
  ]);
  assert.ok(isValidatedPolicy(policy), "a run can spawn it");
  assert.equal(policy.source, "preset:strict");
  assert.equal(allowTexts(policyOf({})), "off", "without the flag the preset is unchanged");
});

Deno.test("--allow-net needs --ack-network: E_UNSAFE_ACK_REQUIRED, exit 2, before any pattern is read", () => {
  for (const patterns of [["example.org"], ["*"]]) {
    assert.throws(() => sandboxOption({ "allow-net": patterns }, CWD), (error: unknown) => {
      assert.ok(error instanceof UsageError);
      assert.equal(error.code, "E_UNSAFE_ACK_REQUIRED");
      assert.match(error.message, /^Flag "--allow-net" must be acknowledged with --ack-network$/);
      assert.equal(exitCodeForError(error.code), 2);
      return true;
    });
  }
});

Deno.test("--allow-net with a bad pattern: E_POLICY_NET_RULE naming each, exit 2", () => {
  assert.throws(
    () => allowNetRules({ "allow-net": ["ok.example,*", "10.0.0.0/8", "x.example,"], "ack-network": true }),
    (error: unknown) => {
      assert.ok(error instanceof PolicyError);
      assert.equal(error.code, "E_POLICY_NET_RULE");
      assert.equal(exitCodeForError(error.code), 2);
      assert.deepEqual(error.problems.map((p) => [p.field, p.message]), [
        [
          "--allow-net",
          'Flag "--allow-net" is refused: network rule "*" is "*" alone: name the hosts (or use "network": "on")',
        ],
        [
          "--allow-net",
          'Flag "--allow-net" is refused: network rule "10.0.0.0/8" is an address range: name each address (ranges are not supported)',
        ],
        ["--allow-net", 'Flag "--allow-net" is refused: network rule "" is empty'],
      ]);
      assert.match(error.message, /and 2 more problem/);
      return true;
    },
  );
});

Deno.test("--allow-net adds to a policy file's own allow list; refused with network on", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const list = join(dir, "list.json");
    Deno.writeTextFileSync(
      list,
      JSON.stringify({ version: 1, network: { allow: ["a.example", "b.example"] } }),
    );
    const merged = policyOf({ policy: list, "allow-net": ["b.example,c.example:443"], "ack-network": true });
    assert.deepEqual(allowTexts(merged), ["a.example", "b.example", "c.example:443"]);
    assert.equal(merged.source, `file:${list}`);

    const on = join(dir, "on.json");
    Deno.writeTextFileSync(on, JSON.stringify({ version: 1, network: "on" }));
    assert.throws(
      () => sandboxOption({ policy: on, "allow-net": ["a.example"], "ack-network": true }, CWD),
      (error: unknown) => {
        assert.ok(error instanceof UsageError);
        assert.equal(error.code, "E_USAGE");
        assert.match(error.message, /cannot apply to policy "file:.*on\.json": its network is "on"/);
        return true;
      },
    );
    // A policy file's own list still needs the acknowledgement, flag or not.
    assert.throws(() => sandboxOption({ policy: list }, CWD), (error: unknown) => {
      assert.ok(error instanceof PolicyError);
      assert.equal(error.code, "E_POLICY_NETWORK_ACK");
      return true;
    });
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("--allow-net with --sandbox none or external is refused: nothing would enforce it", () => {
  const none = {
    sandbox: "none",
    "unsafe-no-sandbox": true,
    "ack-no-network-enforcement": true,
    "allow-net": ["a.example"],
    "ack-network": true,
  };
  assert.throws(() => sandboxOption(none, CWD), /Flag "--allow-net" cannot apply with --sandbox none/);
  const external = {
    sandbox: "external",
    "ack-external-sandbox": true,
    "allow-net": ["a"],
    "ack-network": true,
  };
  assert.throws(() => sandboxOption(external, CWD), /cannot apply with --sandbox external/);
});
