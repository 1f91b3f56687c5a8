import assert from "node:assert/strict";
import { UsageError } from "../errors.ts";
import { checkPolicyDocument } from "../policy/mod.ts";
import { recordedPolicy, type RecordedScenario } from "./_bundle.ts";

const recorded = { workspaceDir: null } as unknown as RecordedScenario;
const acks = { unsafeWrite: false, network: true, hostSockets: false };

/** The `policy.effective.json` a run under this allow list records: the resolved policy as JSON. */
function effective(allow: string[]): string {
  const { policy } = checkPolicyDocument({ version: 1, network: { allow } }, "file:/p.json", {
    workspace: "/work/proj",
    home: "/home/me",
    acks: { unsafeWrite: false, network: true },
  });
  assert.ok(policy !== null);
  return JSON.stringify(policy);
}

Deno.test("a recorded allow list is checked again from its rules' text", () => {
  const text = effective(["registry.npmjs.org", "*.pythonhosted.org:443"]);
  const policy = recordedPolicy("/bundle", text, recorded, "/work/proj", acks);
  assert.ok(typeof policy.network === "object");
  assert.deepEqual(policy.network.allow.map((rule) => rule.text), [
    "registry.npmjs.org",
    "*.pythonhosted.org:443",
  ]);
});

Deno.test("a recorded allow list needs --ack-network again; a forged rule is refused", () => {
  const text = effective(["registry.npmjs.org"]);
  assert.throws(
    () => recordedPolicy("/bundle", text, recorded, "/work/proj", { ...acks, network: false }),
    (error: unknown) => {
      assert.ok(error instanceof UsageError);
      assert.equal(error.code, "E_UNSAFE_ACK_REQUIRED");
      assert.match(error.message, /network \{"allow":\["registry\.npmjs\.org"\]\}.*--ack-network/);
      return true;
    },
  );
  // The text is what is checked, whatever the parsed fields claim.
  const forged = text.replace('"text":"registry.npmjs.org"', '"text":"*"');
  assert.throws(() => recordedPolicy("/bundle", forged, recorded, "/work/proj", acks), /E_POLICY_NET_RULE/);
});
