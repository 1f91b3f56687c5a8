import assert from "node:assert/strict";
import { testPolicy } from "../../policy/_testing.ts";
import { parseRules, rulesFor } from "./_testing.ts";
import { seatbeltProfile } from "./profile.ts";
import { type Sysctl, SYSCTLS } from "./sysctls.ts";

const request = { program: "/bin/zsh", args: [], cwd: "/Users/me/project", env: {} };
const rules = parseRules(seatbeltProfile(testPolicy(), request));

/** Sysctls that reveal other processes (their arguments and environment) or kernel internals. */
const NEVER_READABLE = [
  "kern.procargs2",
  "kern.procargs",
  "kern.proc.all",
  "kern.proc.pid.1",
  "kern.proc.pgrp.1",
  "kern.proc.uid.501",
  "kern.file",
  "kern.vnode",
  "kern.bootargs",
  "security.mac.sandbox.sentinel",
  "net.inet.tcp.pcblist",
  "vm.swapusage",
];

function matches(entry: Sysctl, name: string): boolean {
  return entry.filter === "sysctl-name" ? name === entry.name : name.startsWith(entry.name);
}

for (const entry of SYSCTLS) {
  Deno.test(`sysctl ${entry.filter} ${entry.name}: readable, and reveals no other process`, () => {
    assert.match(entry.name, /^(hw|kern|sysctl)\.[a-z0-9_.]+$/);
    assert.ok(entry.why.length > 10, "says why");
    for (const name of NEVER_READABLE) assert.ok(!matches(entry, name), name);
    const [read] = rulesFor(rules, "allow", ["sysctl-read"]);
    assert.equal(read!.filters.filter((f) => f.kind === entry.filter && f.value === entry.name).length, 1);
  });
}

Deno.test("sysctl-read is granted by name only, and sysctl-write never", () => {
  const sysctlRules = rules.filter((rule) => rule.operations.some((op) => op.startsWith("sysctl")));
  assert.equal(sysctlRules.length, 1);
  assert.deepEqual(sysctlRules[0]!.operations, ["sysctl-read"]);
  assert.equal(sysctlRules[0]!.filters.length, SYSCTLS.length);
  assert.equal(new Set(SYSCTLS.map((entry) => entry.name)).size, SYSCTLS.length, "no duplicates");
});
