import assert from "node:assert/strict";
import { testPolicy } from "../policy/_testing.ts";
import { bwrapPlan } from "./bwrap.ts";
import { seccompOptionsOf } from "./host_sockets.ts";
import type { HostFacts, LaunchRequest } from "./plan.ts";

const CLOSED = new Uint8Array([1]);
const OPEN = new Uint8Array([2]);
const host: HostFacts = {
  bwrap: "/usr/bin/bwrap",
  mergedUsr: true,
  seccompFilter: CLOSED,
  seccompFilterHostSockets: OPEN,
  rootLauncher: null,
  maskedPaths: [],
};
const request: LaunchRequest = { program: "/usr/bin/bash", args: [], cwd: "/w", env: {} };
const granted = testPolicy({ fs: { read: [], write: [], sockets: ["/run/user/1000/bus"] } });

Deno.test("host sockets: network off and no grant carries the closed filter, binds no socket", () => {
  const plan = bwrapPlan(testPolicy(), request, host);
  assert.equal(plan.files[0]?.content, CLOSED);
  assert.deepEqual(seccompOptionsOf(testPolicy()), { network: false, hostSockets: false });
  assert.deepEqual(plan.descriptors.filter((d) => d.purpose === "socket"), []);
});

Deno.test("host sockets: a grant binds exactly each socket read-only and carries the open filter", () => {
  const plan = bwrapPlan(granted, request, host);
  assert.equal(plan.files[0]?.content, OPEN);
  const sockets = plan.descriptors.filter((d) => d.purpose === "socket");
  assert.deepEqual(sockets.map((d) => [d.path, d.dest, d.writable]), [[
    "/run/user/1000/bus",
    "/run/user/1000/bus",
    false,
  ]]);
  const at = plan.argv.findIndex((a, i) =>
    a === "--ro-bind-fd" && plan.argv[i + 1] === String(sockets[0]!.target)
  );
  assert.ok(at > 0 && plan.argv[at + 2] === "/run/user/1000/bus");
  assert.ok(!plan.argv.includes("/run/user/1000"));
  assert.deepEqual(seccompOptionsOf(granted), { network: false, hostSockets: true });
});

Deno.test("host sockets: without the open filter in the host facts a grant is refused, never closed silently", () => {
  const { seccompFilterHostSockets: _, ...bare } = host;
  assert.throws(() => bwrapPlan(granted, request, bare), /E_SANDBOX_START|grants host sockets/);
});
