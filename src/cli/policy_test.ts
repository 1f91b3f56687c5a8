import assert from "node:assert/strict";
import { UsageError } from "../errors.ts";
import { policyCommand, policySummary } from "./policy.ts";

async function run(args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await policyCommand(args, (s) => out.push(s), (s) => err.push(s));
  return { code, out, err };
}

Deno.test("policy check PRESET prints one ok line and exits 0", async () => {
  const { code, out, err } = await run(["check", "basic", "--cwd", "/work/proj"]);
  assert.equal(code, 0);
  assert.deepEqual(out, [
    'ok: preset:basic (exec ["/usr/local/bin","/usr/bin","/bin"], fs.read [], fs.write [], env [], network off)',
  ]);
  assert.deepEqual(err, []);
});

Deno.test("policy check prints every problem as CODE field: message and exits 2", async () => {
  const { code, out, err } = await run(["check", "workspace", "--cwd", "/"]);
  assert.equal(code, 2);
  assert.deepEqual(out.map((line) => line.split(":")[0]), [
    "E_POLICY_BROAD_ROOT fs.read[0]",
    "E_POLICY_WRITE_ACK fs.write",
    "E_POLICY_BROAD_ROOT fs.write[0]",
  ]);
  assert.deepEqual(err, ["specter: 3 problem(s) in preset:workspace"]);
});

Deno.test("policy check --json prints ok, source, problems and policy", async () => {
  const bad = await run(["check", "workspace", "--cwd", "/work/proj", "--json"]);
  assert.equal(bad.code, 2);
  assert.deepEqual(bad.err, []);
  const result = JSON.parse(bad.out.join(""));
  assert.equal(result.ok, false);
  assert.equal(result.source, "preset:workspace");
  assert.equal(result.policy, null);
  assert.deepEqual(result.problems.map((p: { code: string }) => p.code), ["E_POLICY_WRITE_ACK"]);

  const good = await run(["check", "workspace", "--cwd", "/work/proj", "--json", "--ack-unsafe-write"]);
  assert.equal(good.code, 0);
  const ok = JSON.parse(good.out.join(""));
  assert.deepEqual(Object.keys(ok), ["ok", "source", "problems", "policy"]);
  assert.equal(ok.ok, true);
  assert.deepEqual(ok.problems, []);
  assert.deepEqual(ok.policy.fs, { read: ["/work/proj"], write: ["/work/proj"] });
});

Deno.test("a relative --cwd is a policy problem, not a usage error", async () => {
  const { code, out } = await run(["check", "strict", "--cwd", "proj"]);
  assert.equal(code, 2);
  assert.match(out[0] ?? "", /^E_POLICY_PATH_RELATIVE cwd: Field "cwd"/);
});

const USAGE: readonly [string[], RegExp][] = [
  [[], /Missing subcommand/],
  [["lint", "strict"], /Unknown policy subcommand "lint"/],
  [["check"], /Missing policy/],
  [["check", "a", "b"], /Unexpected argument "b"/],
  [["check", "strict", "--bogus"], /bogus/],
  [["check", "strict", "--cwd"], /cwd/],
];

for (const [args, message] of USAGE) {
  Deno.test(`policy ${args.join(" ") || "(no arguments)"} is a usage error`, async () => {
    await assert.rejects(run(args), (e: unknown) => {
      assert.ok(e instanceof UsageError);
      assert.equal(e.code, "E_USAGE");
      assert.match(e.message, message);
      return true;
    });
  });
}

Deno.test("the summary lists budgets only when some are set", () => {
  const policy = {
    version: 1 as const,
    source: "file:/p.json",
    exec: [],
    fs: { read: ["/srv/a"], write: [] },
    env: ["LANG"],
    network: "on" as const,
    budgets: {
      wall_ms: 1000,
      cpu_seconds: null,
      memory_bytes: null,
      processes: 5,
      output_bytes: null,
      file_size_bytes: null,
    },
  };
  assert.equal(
    policySummary(policy),
    'ok: file:/p.json (exec [], fs.read ["/srv/a"], fs.write [], env ["LANG"], network on, ' +
      'budgets {"wall_ms":1000,"processes":5})',
  );
});
