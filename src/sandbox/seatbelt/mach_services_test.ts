import assert from "node:assert/strict";
import { testPolicy } from "../../policy/_testing.ts";
import { filterValues, parseRules, rulesFor } from "./_testing.ts";
import { MACH_SERVICES, type MachService, NETWORK_MACH_SERVICES } from "./mach_services.ts";
import { seatbeltProfile } from "./profile.ts";

const request = { program: "/bin/zsh", args: [], cwd: "/Users/me/project", env: {} };
const strict = parseRules(seatbeltProfile(testPolicy(), request));
const online = parseRules(seatbeltProfile(testPolicy({ network: "on" }), request));

/** Services that would let a program act outside the sandbox; none may ever be listed. */
const NEVER = [
  "com.apple.SecurityServer", // the keychain
  "com.apple.coreservices.launchservicesd", // opening apps and URLs
  "com.apple.pasteboard.1", // the clipboard
  "com.apple.xpc.launchd.domain.system", // launchd
  "com.apple.tccd", // privacy permissions
  "com.apple.windowserver.active",
];

function lookups(rules: ReturnType<typeof parseRules>): string[] {
  return filterValues(rulesFor(rules, "allow", ["mach-lookup"]), "global-name");
}

function checkEntry(entry: MachService): void {
  assert.match(entry.name, /^com\.apple\.[A-Za-z0-9_.]+$/);
  assert.ok(!entry.name.includes("*"), "an exact name, never a wildcard");
  assert.ok(!NEVER.includes(entry.name));
  assert.ok(entry.why.length > 10, "says why");
}

for (const entry of MACH_SERVICES) {
  Deno.test(`mach service ${entry.name}: in every profile, once`, () => {
    checkEntry(entry);
    for (const rules of [strict, online]) {
      assert.equal(lookups(rules).filter((n) => n === entry.name).length, 1);
    }
  });
}

for (const entry of NETWORK_MACH_SERVICES) {
  Deno.test(`network mach service ${entry.name}: only when network is on`, () => {
    checkEntry(entry);
    assert.ok(!lookups(strict).includes(entry.name));
    assert.equal(lookups(online).filter((n) => n === entry.name).length, 1);
  });
}

Deno.test("mach-lookup is only ever granted by name, for exactly the listed services", () => {
  assert.deepEqual(lookups(strict).sort(), MACH_SERVICES.map((e) => e.name).sort());
  assert.deepEqual(
    lookups(online).sort(),
    [...MACH_SERVICES, ...NETWORK_MACH_SERVICES].map((e) => e.name).sort(),
  );
  for (const rules of [strict, online]) {
    for (const rule of rules.filter((r) => r.operations.some((op) => op.startsWith("mach")))) {
      assert.deepEqual(rule.operations, ["mach-lookup"]);
      assert.ok(rule.filters.length > 0 && rule.filters.every((f) => f.kind === "global-name"));
    }
  }
});
