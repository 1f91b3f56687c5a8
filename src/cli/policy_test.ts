import assert from "node:assert/strict";
import { UsageError } from "../errors.ts";
import { loadPolicy } from "../policy/mod.ts";
import { fingerprintPlan, redactedArgv } from "../sandbox/fingerprint.ts";
import { probeBwrap } from "../sandbox/probe.ts";
import { prepareLaunch } from "../session/spawn_session.ts";
import { policyCommand, policySummary } from "./policy.ts";
import { explainPolicy, formatExplanation } from "./policy_explain.ts";

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
    'ok: preset:basic (exec ["/usr/local/bin","/usr/bin","/bin"], fs.read [], fs.write [], env [], network off, budgets {"processes":512})',
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
  [["explain"], /Missing policy/],
  [["render"], /Missing policy/],
  [["check", "a", "b"], /Unexpected argument "b"/],
  [["check", "strict", "--bogus"], /bogus/],
  [["check", "strict", "--cwd"], /cwd/],
  [["check", "strict", "--backend", "bwrap"], /Flag "--backend" applies only to specter policy render/],
  [["explain", "strict", "--env", "A=1"], /Flag "--env" applies only to specter policy render/],
  [["explain", "strict", "--shell"], /Flag "--shell" applies only to specter policy render/],
  [["check", "strict", "--strict-write"], /Flag "--strict-write" applies only to specter policy render/],
  [["explain", "strict", "--", "ls"], /only specter policy render takes one/],
  [["render", "strict", "--backend", "none"], /Flag "--backend" must be one of bwrap, seatbelt, got "none"/],
  [["render", "strict", "--"], /No command after "--"/],
  [["render", "strict", "--env", "NOVALUE"], /Flag "--env" needs NAME=VALUE, got "NOVALUE"/],
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

Deno.test("policy render --strict-write without --ack-unsafe-write fails like run does", async () => {
  await assert.rejects(run(["render", "strict", "--strict-write"]), (e: unknown) => {
    assert.ok(e instanceof UsageError);
    assert.equal(e.code, "E_UNSAFE_ACK_REQUIRED");
    assert.equal(e.message, 'Flag "--strict-write" must be acknowledged with --ack-unsafe-write');
    return true;
  });
});

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
    replay: { normalize: null, redactions: [] },
  };
  assert.equal(
    policySummary(policy),
    'ok: file:/p.json (exec [], fs.read ["/srv/a"], fs.write [], env ["LANG"], network on, ' +
      'budgets {"wall_ms":1000,"processes":5})',
  );
});

Deno.test("policy explain prints the explanation, and --json its structured form", async () => {
  const cwd = "/work/proj";
  const text = await run(["explain", "basic", "--cwd", cwd]);
  assert.equal(text.code, 0);
  assert.deepEqual(text.err, []);
  const policy = loadPolicy("basic", {
    workspace: cwd,
    home: Deno.env.get("HOME") ?? "",
    acks: { unsafeWrite: false, network: false },
  });
  const explanation = explainPolicy(policy, { cwd, home: Deno.env.get("HOME") ?? "" });
  assert.deepEqual(text.out, [formatExplanation(explanation)]);
  const json = await run(["explain", "basic", "--cwd", cwd, "--json"]);
  assert.equal(json.code, 0);
  assert.deepEqual(JSON.parse(json.out.join("")), JSON.parse(JSON.stringify(explanation)));
});

Deno.test("explain and render print a bad policy's problems like check and exit 2", async () => {
  for (const subcommand of ["explain", "render"]) {
    const human = await run([subcommand, "workspace", "--cwd", "/"]);
    assert.equal(human.code, 2);
    assert.deepEqual(human.out, (await run(["check", "workspace", "--cwd", "/"])).out);
    assert.deepEqual(human.err, ["specter: 3 problem(s) in preset:workspace"]);
    const json = await run([subcommand, "workspace", "--cwd", "/work/proj", "--json"]);
    assert.equal(json.code, 2);
    const result = JSON.parse(json.out.join(""));
    assert.deepEqual(Object.keys(result), ["ok", "source", "problems", "policy"]);
    assert.equal(result.ok, false);
    assert.deepEqual(result.problems.map((p: { code: string }) => p.code), ["E_POLICY_WRITE_ACK"]);
  }
});

Deno.test({
  name: "policy render --json is the plan prepareLaunch gives a run with the same options",
  ignore: !probeBwrap().ok,
  fn: async () => {
    const cwd = Deno.cwd();
    const { code, out } = await run(["render", "basic", "--cwd", cwd, "--json", "--", "ls", "-l"]);
    assert.equal(code, 0);
    const rendering = JSON.parse(out.join(""));
    const policy = loadPolicy("basic", {
      workspace: cwd,
      home: Deno.env.get("HOME") ?? "",
      acks: { unsafeWrite: false, network: false },
    });
    const { plan, program } = prepareLaunch({
      argv: ["ls", "-l"],
      cwd,
      shell: false,
      env: {},
      sandbox: { mode: "bwrap", policy, strictWrite: false },
    });
    assert.equal(rendering.program, program);
    assert.deepEqual(rendering.argv, redactedArgv(plan.argv));
    assert.deepEqual(rendering.fingerprint, fingerprintPlan(plan));
    assert.equal(rendering.seccomp.sha256, fingerprintPlan(plan).files_sha256["seccomp-bpf filter"]);
  },
});
