/**
 * `specter policy check` as a real process: every bad policy fails with its own stable code and a message
 * naming the field; valid policies and presets exit 0.
 */
import assert from "node:assert/strict";
import { DENO, ROOT, withTempDir } from "./_helpers.ts";

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

async function specter(...args: string[]): Promise<CliResult> {
  const { code, stdout, stderr } = await new Deno.Command(DENO, {
    args: ["run", "-A", `${ROOT}/main.ts`, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    cwd: ROOT,
    // A fixed home that is not a broad root by itself, so "${home}" results do not depend on the machine.
    env: { HOME: "/home/specter-test" },
  }).output();
  const decoder = new TextDecoder();
  return { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
}

function lines(text: string): string[] {
  return text.split("\n").filter((line) => line !== "");
}

interface BadPolicy {
  /** What is wrong. */
  name: string;
  /** File name (its extension picks JSON or TOML). */
  file: string;
  text: string;
  code: string;
  field: string;
  /** Flags that accept the problem (the policy is then valid); absent when no flag can. */
  fix?: string[];
}

const BAD: readonly BadPolicy[] = [
  {
    name: "a relative path",
    file: "relative.json",
    text: '{"version":1,"exec":["bin/tool"]}',
    code: "E_POLICY_PATH_RELATIVE",
    field: "exec[0]",
  },
  {
    name: "a path with ..",
    file: "dotdot.toml",
    text: 'version = 1\n[fs]\nread = ["/srv/data/../../etc"]\n',
    code: "E_POLICY_PATH_DOTDOT",
    field: "fs.read[0]",
  },
  {
    name: "a broad root",
    file: "broad.toml",
    text: 'version = 1\n[fs]\nread = ["/etc"]\n',
    code: "E_POLICY_BROAD_ROOT",
    field: "fs.read[0]",
  },
  {
    name: "the home directory",
    file: "home.json",
    text: '{"version":1,"fs":{"read":["${home}"]}}',
    code: "E_POLICY_BROAD_ROOT",
    field: "fs.read[0]",
  },
  {
    name: "an unknown key",
    file: "unknown.json",
    text: '{"version":1,"fs":{"read":[],"exec":["/usr/bin"]}}',
    code: "E_POLICY_UNKNOWN_KEY",
    field: "fs.exec",
  },
  {
    name: "a write allowlist without --ack-unsafe-write",
    file: "write.toml",
    text: 'version = 1\n[fs]\nwrite = ["${workspace}/out"]\n',
    code: "E_POLICY_WRITE_ACK",
    field: "fs.write",
    fix: ["--ack-unsafe-write"],
  },
  {
    name: "network on without --ack-network",
    file: "network.json",
    text: '{"version":1,"network":"on"}',
    code: "E_POLICY_NETWORK_ACK",
    field: "network",
    fix: ["--ack-network"],
  },
  {
    name: "an unsupported version",
    file: "version.toml",
    text: "version = 2\n",
    code: "E_POLICY_VERSION",
    field: "version",
  },
  {
    name: "a wrong type",
    file: "schema.json",
    text: '{"version":1,"budgets":{"wall_ms":"10s"}}',
    code: "E_POLICY_SCHEMA",
    field: "budgets.wall_ms",
  },
];

for (const bad of BAD) {
  Deno.test(`policy check: ${bad.name} fails with ${bad.code} naming "${bad.field}"`, async () => {
    await withTempDir(async (dir) => {
      await Deno.writeTextFile(`${dir}/${bad.file}`, bad.text);
      const result = await specter("policy", "check", `${dir}/${bad.file}`, "--cwd", dir);
      assert.equal(result.code, 2, result.stderr);
      const [line = "", ...rest] = lines(result.stdout);
      assert.deepEqual(rest, []);
      assert.ok(line.startsWith(`${bad.code} ${bad.field}: `), line);
      assert.ok(line.includes(`"${bad.field}"`), `the message names the field: ${line}`);
      assert.equal(result.stderr, `specter: 1 problem(s) in file:${dir}/${bad.file}\n`);
      if (bad.fix !== undefined) {
        const fixed = await specter("policy", "check", `${dir}/${bad.file}`, "--cwd", dir, ...bad.fix);
        assert.equal(fixed.code, 0, fixed.stdout);
        assert.ok(fixed.stdout.startsWith(`ok: file:${dir}/${bad.file} (`), fixed.stdout);
      }
    });
  });
}

Deno.test("policy check prints every problem of a file, in document order, and --json carries them", async () => {
  await withTempDir(async (dir) => {
    const file = `${dir}/many.toml`;
    await Deno.writeTextFile(
      file,
      ['exec = ["tool"]', 'network = "on"', "extra = 1", "[fs]", 'read = ["/usr"]', 'write = ["/srv/x/"]']
        .join("\n"),
    );
    const human = await specter("policy", "check", file);
    assert.equal(human.code, 2);
    const expected = [
      "E_POLICY_VERSION version",
      "E_POLICY_PATH_RELATIVE exec[0]",
      "E_POLICY_NETWORK_ACK network",
      "E_POLICY_UNKNOWN_KEY extra",
      "E_POLICY_BROAD_ROOT fs.read[0]",
      "E_POLICY_WRITE_ACK fs.write",
      "E_POLICY_PATH_DOTDOT fs.write[0]",
    ];
    assert.deepEqual(lines(human.stdout).map((line) => line.slice(0, line.indexOf(":"))), expected);

    const json = await specter("policy", "check", file, "--json");
    assert.equal(json.code, 2);
    assert.equal(json.stderr, "");
    const result = JSON.parse(json.stdout);
    assert.equal(result.ok, false);
    assert.equal(result.source, `file:${file}`);
    assert.equal(result.policy, null);
    assert.deepEqual(
      result.problems.map((p: { code: string; field: string }) => `${p.code} ${p.field}`),
      expected,
    );
  });
});

Deno.test("policy check strict exits 0 with an ok line", async () => {
  const result = await specter("policy", "check", "strict");
  assert.equal(result.code, 0, result.stderr);
  assert.equal(
    result.stdout,
    "ok: preset:strict (exec [], fs.read [], fs.write [], env [], network off)\n",
  );
  assert.equal(result.stderr, "");
});

Deno.test("policy check workspace needs --ack-unsafe-write and resolves to the --cwd", async () => {
  await withTempDir(async (dir) => {
    const denied = await specter("policy", "check", "workspace", "--cwd", dir);
    assert.equal(denied.code, 2);
    assert.match(denied.stdout, /^E_POLICY_WRITE_ACK fs.write: /);
    const allowed = await specter(
      "policy",
      "check",
      "workspace",
      "--cwd",
      dir,
      "--ack-unsafe-write",
      "--json",
    );
    assert.equal(allowed.code, 0, allowed.stdout);
    const result = JSON.parse(allowed.stdout);
    assert.equal(result.ok, true);
    assert.deepEqual(result.policy.fs, { read: [dir], write: [dir] });
  });
});

Deno.test("policy check of an unknown name or a missing file fails with E_POLICY_NOT_FOUND", async () => {
  const result = await specter("policy", "check", "no-such-policy");
  assert.equal(result.code, 2);
  assert.match(
    result.stdout,
    /^E_POLICY_NOT_FOUND \(policy\): The policy "no-such-policy" is neither a preset/,
  );
});

Deno.test("policy check of bad TOML fails with E_POLICY_PARSE", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/p.toml`, "version = = 1\n");
    const result = await specter("policy", "check", `${dir}/p.toml`);
    assert.equal(result.code, 2);
    assert.match(
      result.stdout,
      /^E_POLICY_PARSE \(policy\): The policy "file:.*" is not valid TOML: .*\(line 1, column \d+\)\n$/,
    );
  });
});

Deno.test("policy usage errors exit 2 with E_USAGE; help policy documents the command", async () => {
  const usage = await specter("policy", "frob");
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /^specter: E_USAGE: Unknown policy subcommand "frob"/);
  const help = await specter("help", "policy");
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: specter policy check FILE\|PRESET/);
  assert.match(help.stdout, /--ack-unsafe-write/);
  const top = await specter("--help");
  assert.match(top.stdout, /specter policy check FILE\|PRESET/);
});
