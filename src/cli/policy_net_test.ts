import assert from "node:assert/strict";
import { join } from "node:path";
import { probeBwrap } from "../sandbox/probe.ts";
import { policyCommand } from "./policy.ts";

async function run(args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await policyCommand(args, (s) => out.push(s), (s) => err.push(s));
  return { code, out, err };
}

const ALLOW = ["--allow-net", "registry.npmjs.org,*.pythonhosted.org:443", "--allow-net", "[::1]:5432"];

Deno.test("policy check --allow-net: the summary lists the rules as written", async () => {
  const { code, out } = await run(["check", "strict", "--cwd", "/work/proj", ...ALLOW, "--ack-network"]);
  assert.equal(code, 0);
  assert.deepEqual(out, [
    'ok: preset:strict (exec [], fs.read [], fs.write [], env [], network allow ["registry.npmjs.org",' +
    '"*.pythonhosted.org:443","[::1]:5432"], budgets {"processes":512})',
  ]);
});

Deno.test("policy check reports bad patterns of a file and of --allow-net with their codes", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    const file = join(dir, "p.json");
    Deno.writeTextFileSync(
      file,
      JSON.stringify({ version: 1, network: { allow: ["ok.example", "*.com", "*"] } }),
    );
    const bad = await run(["check", file, "--cwd", "/work/proj", "--ack-network"]);
    assert.equal(bad.code, 2);
    assert.deepEqual(bad.out.map((line) => line.split(": ")[0]), [
      "E_POLICY_NET_RULE network.allow[1]",
      "E_POLICY_NET_RULE network.allow[2]",
    ]);
    const empty = join(dir, "e.json");
    Deno.writeTextFileSync(empty, JSON.stringify({ version: 1, network: { allow: [] } }));
    const none = await run(["check", empty, "--cwd", "/work/proj", "--json"]);
    assert.equal(none.code, 2);
    assert.deepEqual(JSON.parse(none.out.join("")).problems.map((p: { code: string }) => p.code), [
      "E_POLICY_NET_EMPTY",
    ]);
    const flag = await run([
      "check",
      "strict",
      "--cwd",
      "/work/proj",
      "--allow-net",
      "10.0.0.0/8",
      "--ack-network",
    ]);
    assert.equal(flag.code, 2);
    assert.match(
      flag.out[0]!,
      /^E_POLICY_NET_RULE --allow-net: Flag "--allow-net" is refused: .*address range/,
    );
    assert.deepEqual(flag.err, ["specter: 1 problem(s) in flag --allow-net"]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("policy check --allow-net without --ack-network is refused like run", async () => {
  await assert.rejects(
    () => run(["check", "strict", "--cwd", "/work/proj", "--allow-net", "a.example"]),
    (error: unknown) => (error as { code?: string }).code === "E_UNSAFE_ACK_REQUIRED",
  );
});

Deno.test("policy explain: each rule in words, how the proxy works, what does not leave", async () => {
  const { code, out } = await run(["explain", "strict", "--cwd", "/work/proj", ...ALLOW, "--ack-network"]);
  assert.equal(code, 0);
  const text = out.join("\n");
  const section = text.slice(text.indexOf("  Network:"), text.indexOf("  Environment:"));
  assert.equal(
    section,
    [
      "  Network: only these hosts, through Specter's proxy (accepted with --ack-network)",
      "    - registry.npmjs.org: the name registry.npmjs.org (not its subdomains), any port",
      "    - *.pythonhosted.org:443: every subdomain of pythonhosted.org (not pythonhosted.org itself: list it " +
      "too if it is wanted), port 443",
      "    - [::1]:5432: the address ::1, port 5432",
      "    - how: programs reach the proxy at http://127.0.0.1:3128 inside the sandbox (its own network namespace, " +
      "loopback only); HTTP_PROXY, HTTPS_PROXY, ALL_PROXY (and lower case) point there, NO_PROXY is empty; " +
      "plain HTTP requests and CONNECT tunnels (HTTPS) to an allowed host and port pass, anything else gets a 403",
      "    - names: the proxy resolves them itself (the hosts file counts); an allowed name that resolves to a " +
      "loopback, private, link-local or multicast address is refused, unless the rule names that address or " +
      "localhost itself",
      "    - no DNS leaves the sandbox (no resolver configuration inside, no route out), nor does any direct " +
      "socket, TCP or UDP: only connections through the proxy leave",
      "    - every connection, allowed or refused, is recorded in the run's audit log (specter audit net)",
      "    - note: what a program sends to an allowed host is not inspected: an allowed host can receive your data",
      "",
    ].join("\n"),
  );
  assert.match(text, /for TLS: ssl\/certs, ssl\/openssl\.cnf, ca-certificates \(no resolver files\)/);
  assert.match(text, /Isolation: its own user, mount, PID, IPC, UTS, cgroup and network namespaces/);
  const json = JSON.parse(
    (await run(["explain", "strict", "--json", ...ALLOW, "--ack-network"])).out.join(""),
  );
  assert.equal(json.allows.find((s: { key: string }) => s.key === "network").items.length, 8);
});

Deno.test("policy render --backend seatbelt: the rules, the proxy variables and the profile's proxy rule", async () => {
  const args = [
    "render",
    "strict",
    "--backend",
    "seatbelt",
    "--cwd",
    "/work/proj",
    ...ALLOW,
    "--ack-network",
  ];
  const { code, out } = await run([...args, "--", "/bin/sh"]);
  assert.equal(code, 0);
  const text = out.join("\n");
  assert.match(
    text,
    /Network allow list \(only through Specter's proxy at http:\/\/127\.0\.0\.1:3128; no DNS, no direct socket\):\n {2}registry\.npmjs\.org\n {2}\*\.pythonhosted\.org:443\n {2}\[::1\]:5432\n/,
  );
  assert.match(text, /\n {2}HTTPS_PROXY=http:\/\/127\.0\.0\.1:3128\n/);
  assert.match(text, /\n {2}NO_PROXY=\n/);
  assert.match(text, /\(allow network-outbound \(remote ip "localhost:3128"\)\)/);
  const json = JSON.parse((await run([...args, "--json"])).out.join(""));
  assert.deepEqual(json.net.rules, ["registry.npmjs.org", "*.pythonhosted.org:443", "[::1]:5432"]);
  assert.ok(json.env_names.includes("ALL_PROXY") && json.env_names.includes("NODE_USE_ENV_PROXY"));
});

Deno.test({
  name: "policy render --backend bwrap: no --share-net, the proxy variables set, the same seccomp as off",
  ignore: !probeBwrap().ok,
  fn: async () => {
    const cwd = Deno.cwd();
    const base = ["render", "strict", "--backend", "bwrap", "--cwd", cwd, "--json"];
    const list = JSON.parse((await run([...base, ...ALLOW, "--ack-network"])).out.join(""));
    const off = JSON.parse((await run(base)).out.join(""));
    assert.ok(!list.argv.includes("--share-net"));
    const setenv = list.argv.flatMap((arg: string, i: number) =>
      arg === "--setenv" ? [list.argv[i + 1]] : []
    );
    for (
      const name of ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "NO_PROXY", "NODE_USE_ENV_PROXY"]
    ) {
      assert.ok(setenv.includes(name), name);
    }
    assert.ok(!list.argv.includes("/etc/resolv.conf"));
    assert.equal(list.seccomp.sha256, off.seccomp.sha256);
    assert.notEqual(list.fingerprint.policy_sha256, off.fingerprint.policy_sha256);
  },
});
