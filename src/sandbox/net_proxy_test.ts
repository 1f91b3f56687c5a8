import assert from "node:assert/strict";
import { parseNetRule } from "../policy/mod.ts";
import type { NetRule } from "../policy/mod.ts";
import { testPolicy } from "../policy/_testing.ts";
import { ETC_NETWORK_BINDS, ETC_PROXY_BINDS } from "./bwrap.ts";
import { fingerprintPlan } from "./fingerprint.ts";
import { seccompOptionsOf } from "./host_sockets.ts";
import { NET_PROXY_ENV, NET_PROXY_PORT, NET_PROXY_URL, netProxyOf } from "./net_proxy.ts";
import { compileLaunchPlan, type HostFacts, type LaunchPlan, type LaunchRequest } from "./plan.ts";

const host: HostFacts = {
  bwrap: "/usr/bin/bwrap",
  mergedUsr: true,
  seccompFilter: new Uint8Array([1, 2, 3]),
  seccompFilterHostSockets: new Uint8Array([4, 5, 6]),
  rootLauncher: null,
};
const request: LaunchRequest = {
  program: "/usr/bin/curl",
  args: ["https://registry.npmjs.org/"],
  cwd: "/work/project",
  env: {
    TERM: "xterm-256color",
    PATH: "/usr/bin",
    HOME: "/home/me",
    HTTPS_PROXY: "http://elsewhere:8080",
    NO_PROXY: "*",
  },
};

function rules(...texts: string[]): NetRule[] {
  return texts.map((text) => {
    const parsed = parseNetRule(text);
    assert.ok(parsed.ok, text);
    return parsed.rule;
  });
}

const allowList = testPolicy({ network: { allow: rules("registry.npmjs.org", "localhost:8080") } });

/** The values bwrap's `--setenv NAME VALUE` gives the program. */
function setenv(plan: LaunchPlan): Record<string, string> {
  const env: Record<string, string> = {};
  plan.argv.forEach((arg, i) => {
    if (arg === "--setenv") env[plan.argv[i + 1]!] = plan.argv[i + 2]!;
  });
  return env;
}

function roBindTry(plan: LaunchPlan): string[] {
  return plan.argv.flatMap((arg, i) => (arg === "--ro-bind-try" ? [plan.argv[i + 1]!] : []));
}

Deno.test("the proxy's address and variables: 127.0.0.1:3128, NO_PROXY empty, Node told to use them", () => {
  assert.equal(NET_PROXY_PORT, 3128);
  assert.equal(NET_PROXY_URL, "http://127.0.0.1:3128");
  assert.deepEqual(NET_PROXY_ENV, {
    HTTP_PROXY: NET_PROXY_URL,
    HTTPS_PROXY: NET_PROXY_URL,
    ALL_PROXY: NET_PROXY_URL,
    http_proxy: NET_PROXY_URL,
    https_proxy: NET_PROXY_URL,
    all_proxy: NET_PROXY_URL,
    NO_PROXY: "",
    no_proxy: "",
    NODE_USE_ENV_PROXY: "1",
  });
  assert.deepEqual(netProxyOf(allowList), { port: 3128 });
  assert.equal(netProxyOf(testPolicy()), null);
  assert.equal(netProxyOf(testPolicy({ network: "on" })), null);
  assert.equal(netProxyOf(null), null);
});

Deno.test("bwrap, allow list: own network namespace, network-off seccomp, TLS files but no resolver", () => {
  const plan = compileLaunchPlan(allowList, request, "bwrap", host);
  const off = compileLaunchPlan(testPolicy(), request, "bwrap", host);
  assert.ok(plan.argv.includes("--unshare-all"));
  assert.ok(!plan.argv.includes("--share-net"), "the namespace stays the sandbox's own (loopback only)");
  assert.deepEqual(seccompOptionsOf(allowList), seccompOptionsOf(testPolicy()));
  const filter = (p: LaunchPlan) => p.files.find((file) => file.purpose === "seccomp-bpf filter")!.content;
  assert.deepEqual(filter(plan), filter(off), "the same filter as network off");
  const bound = roBindTry(plan);
  for (const path of ETC_PROXY_BINDS) assert.ok(bound.includes(path), path);
  for (const path of ["/etc/resolv.conf", "/etc/hosts", "/etc/host.conf", "/etc/gai.conf"]) {
    assert.ok(!bound.includes(path), `${path} is not bound: no DNS inside`);
  }
  // The TLS files are a subset of what network "on" binds (nothing new reaches an allow-list sandbox).
  for (const path of ETC_PROXY_BINDS) assert.ok((ETC_NETWORK_BINDS as readonly string[]).includes(path));
  // Network off binds none of them.
  for (const path of ETC_PROXY_BINDS) assert.ok(!roBindTry(off).includes(path), path);
  assert.deepEqual(plan.netProxy, { port: NET_PROXY_PORT });
  assert.equal(off.netProxy, null);
});

Deno.test("bwrap, allow list: the program's environment names the proxy, over the caller's variables", () => {
  const plan = compileLaunchPlan(allowList, request, "bwrap", host);
  const env = setenv(plan);
  for (const [name, value] of Object.entries(NET_PROXY_ENV)) assert.equal(env[name], value, name);
  assert.equal(env.TERM, "xterm-256color");
  // Network off: the caller's variables go through unchanged, and no proxy variable is added.
  const off = setenv(compileLaunchPlan(testPolicy(), request, "bwrap", host));
  assert.equal(off.HTTPS_PROXY, "http://elsewhere:8080");
  assert.equal(off.NO_PROXY, "*");
  assert.equal(off.HTTP_PROXY, undefined);
  assert.equal(off.NODE_USE_ENV_PROXY, undefined);
});

Deno.test("seatbelt, allow list: the plan's environment names the proxy too", () => {
  const plan = compileLaunchPlan(allowList, request, "seatbelt", host, { tmpDir: "/private/tmp/x" });
  for (const [name, value] of Object.entries(NET_PROXY_ENV)) assert.equal(plan.env[name], value, name);
  assert.equal(plan.env.TMPDIR, "/private/tmp/x");
  assert.deepEqual(plan.netProxy, { port: NET_PROXY_PORT });
  const off = compileLaunchPlan(testPolicy(), request, "seatbelt", host);
  assert.equal(off.env.HTTPS_PROXY, "http://elsewhere:8080");
  assert.equal(off.netProxy, null);
});

Deno.test("none and external plans have no proxy (nothing would enforce a list there)", () => {
  for (const backend of ["none", "external"] as const) {
    const plan = compileLaunchPlan(null, request, backend, host);
    assert.equal(plan.netProxy, null);
    assert.equal(plan.env.HTTPS_PROXY, "http://elsewhere:8080");
  }
});

Deno.test("the fingerprint's policy hash covers the allow list: another rule, another hash", () => {
  const a = fingerprintPlan(compileLaunchPlan(allowList, request, "bwrap", host));
  const b = fingerprintPlan(
    compileLaunchPlan(
      testPolicy({ network: { allow: rules("registry.npmjs.org", "localhost:8081") } }),
      request,
      "bwrap",
      host,
    ),
  );
  const off = fingerprintPlan(compileLaunchPlan(testPolicy(), request, "bwrap", host));
  assert.notEqual(a.policy_sha256, b.policy_sha256);
  assert.notEqual(a.policy_sha256, off.policy_sha256);
  // The argv differs from network off's (TLS binds, the proxy variables' names).
  assert.notEqual(a.argv_sha256, off.argv_sha256);
  // The policy a launch record carries shows each rule as written.
  const plan = compileLaunchPlan(allowList, request, "bwrap", host);
  const recorded = JSON.parse(JSON.stringify(plan.policy)) as { network: { allow: { text: string }[] } };
  assert.deepEqual(recorded.network.allow.map((rule) => rule.text), ["registry.npmjs.org", "localhost:8080"]);
});
