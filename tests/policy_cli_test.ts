/**
 * `specter policy check|explain|render` as a real process: every bad policy fails with its own stable code
 * and a message naming the field; valid policies and presets exit 0; `explain` matches its goldens;
 * `render` prints the plan a run executes (same hashes as the run's own fingerprint) and no env value.
 */
import assert from "node:assert/strict";
import { loadPolicy, PRESET_NAMES, type PresetName } from "../src/policy/mod.ts";
import { fingerprintPlan, redactedArgv, sha256 } from "../src/sandbox/fingerprint.ts";
import { SANDBOX_EXEC } from "../src/sandbox/seatbelt/mod.ts";
import { compileSeccomp, seccompArchFor } from "../src/sandbox/seccomp/mod.ts";
import type { SpawnOptions } from "../src/session/options.ts";
import { kernelEnforces } from "../src/ceilings/mod.ts";
import { prepareLaunch } from "../src/session/spawn_session.ts";
import { DENO, ROOT, withTempDir } from "./_helpers.ts";

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The fixed home of every CLI run (not a broad root by itself, so results do not depend on the machine). */
const HOME = "/home/specter-test";

async function specter(...args: string[]): Promise<CliResult> {
  return await specterWithEnv({}, ...args);
}

async function specterWithEnv(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  const { code, stdout, stderr } = await new Deno.Command(DENO, {
    args: ["run", "--quiet", "-A", `${ROOT}/main.ts`, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    cwd: ROOT,
    env: { HOME, ...env },
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
    'ok: preset:strict (exec [], fs.read [], fs.write [], env [], network off, budgets {"processes":512})\n',
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
  assert.match(help.stdout, /specter policy explain FILE\|PRESET/);
  assert.match(help.stdout, /specter policy render FILE\|PRESET \[--backend bwrap\|seatbelt\]/);
  assert.match(help.stdout, /--ack-unsafe-write/);
  const top = await specter("--help");
  assert.match(top.stdout, /specter policy check FILE\|PRESET/);
});

// ---- policy explain ----

/** The fixed run the explain goldens describe. */
const GOLDEN_CWD = "/work/project";

function presetFlags(name: PresetName): string[] {
  return name === "workspace" ? ["--ack-unsafe-write"] : [];
}

async function golden(name: string, actual: string): Promise<string> {
  const url = new URL(`../fixtures/goldens/explain/${name}`, import.meta.url);
  if (Deno.env.get("UPDATE_GOLDENS") === "1") await Deno.writeTextFile(url, actual);
  return await Deno.readTextFile(url);
}

for (const name of PRESET_NAMES) {
  Deno.test(`policy explain ${name} prints fixtures/goldens/explain/${name}.txt, --json its .json`, async () => {
    const text = await specter("policy", "explain", name, "--cwd", GOLDEN_CWD, ...presetFlags(name));
    assert.equal(text.code, 0, text.stderr);
    assert.equal(text.stderr, "");
    assert.equal(text.stdout, await golden(`${name}.txt`, text.stdout), "rewrite with UPDATE_GOLDENS=1");
    const json = await specter(
      "policy",
      "explain",
      name,
      "--cwd",
      GOLDEN_CWD,
      "--json",
      ...presetFlags(name),
    );
    assert.equal(json.code, 0, json.stderr);
    const expected = JSON.parse(
      await golden(`${name}.json`, JSON.stringify(JSON.parse(json.stdout), null, 2) + "\n"),
    );
    assert.deepEqual(JSON.parse(json.stdout), expected);
  });
}

Deno.test("policy explain of a bad policy prints its problems and exits 2", async () => {
  const result = await specter("policy", "explain", "workspace", "--cwd", GOLDEN_CWD);
  assert.equal(result.code, 2);
  assert.match(result.stdout, /^E_POLICY_WRITE_ACK fs.write: /);
  assert.equal(result.stderr, "specter: 1 problem(s) in preset:workspace\n");
});

// ---- policy render ----

const HAS_BWRAP = (() => {
  try {
    return Deno.statSync("/usr/bin/bwrap").isFile;
  } catch {
    return false; // No bwrap: the real-plan render tests cannot run here.
  }
})();

const ARCH = seccompArchFor(Deno.build.arch);

/** The options a `specter run` with the same choices passes to spawn (see renderOptions). */
function runOptions(
  spec: string,
  cwd: string,
  backend: "bwrap" | "seatbelt",
  command: string[],
  acks = { unsafeWrite: false, network: false },
  env: Record<string, string> = {},
): SpawnOptions {
  const policy = loadPolicy(spec, { workspace: cwd, home: HOME, acks });
  return { argv: command, cwd, shell: false, env, sandbox: { mode: backend, policy, strictWrite: false } };
}

/** The fingerprint lines of a human rendering, parsed. */
function printedFingerprint(stdout: string): Record<string, string> {
  const lines = stdout.split("\n");
  const start = lines.findIndex((line) => line.startsWith("Fingerprint ("));
  assert.ok(start >= 0, stdout);
  return Object.fromEntries(
    lines.slice(start + 1).filter((line) => line.startsWith("  ")).map((line) => {
      const at = line.indexOf(": ");
      return [line.slice(2, at), line.slice(at + 2)];
    }),
  );
}

for (const name of PRESET_NAMES) {
  Deno.test({
    name: `policy render ${name} --backend bwrap prints the plan a run executes, with the same hashes`,
    ignore: !HAS_BWRAP,
    fn: async () => {
      await withTempDir(async (dir) => {
        const flags = ["--backend", "bwrap", "--cwd", dir, ...presetFlags(name)];
        const human = await specter("policy", "render", name, ...flags);
        assert.equal(human.code, 0, human.stderr);
        assert.equal(human.stderr, "");
        const json = await specter("policy", "render", name, ...flags, "--json");
        assert.equal(json.code, 0, json.stderr);
        const rendering = JSON.parse(json.stdout);

        // What an in-process run with the same options would execute, and record in its audit log.
        const acks = { unsafeWrite: name === "workspace", network: false };
        const { plan, program } = prepareLaunch(runOptions(name, dir, "bwrap", ["/bin/sh"], acks));
        const fingerprint = fingerprintPlan(plan);
        const filter = compileSeccomp(ARCH, { network: false });

        assert.equal(rendering.backend, "bwrap");
        assert.equal(rendering.source, `preset:${name}`);
        assert.equal(rendering.program, program);
        assert.deepEqual(rendering.argv, redactedArgv(plan.argv));
        assert.deepEqual(rendering.fingerprint, fingerprint);
        assert.equal(rendering.seccomp.sha256, sha256(filter));
        assert.equal(rendering.fingerprint.files_sha256["seccomp-bpf filter"], sha256(filter));
        assert.equal(rendering.seccomp.bytes, filter.length);
        assert.equal(rendering.profile, undefined);
        assert.ok(rendering.argv.includes("--unshare-all"));
        const seccomp = rendering.argv.indexOf("--seccomp");
        assert.equal(rendering.argv[seccomp + 1], "3");

        assert.match(human.stdout, /^ {4}--unshare-all \\$/m);
        assert.match(human.stdout, /^ {4}--seccomp 3 \\$/m);
        assert.ok(human.stdout.includes(`Seccomp filter (fd 3, ${ARCH}): ${filter.length} bytes`));
        assert.ok(human.stdout.includes(`sha256 ${sha256(filter)}\n`));
        assert.match(human.stdout, /^ {2}ptrace +\d+ +ERRNO\(EPERM\) +Tracing another process/m);
        assert.deepEqual(printedFingerprint(human.stdout), {
          backend: "bwrap",
          argv_sha256: fingerprint.argv_sha256,
          'files_sha256["seccomp-bpf filter"]': sha256(filter),
          policy_sha256: fingerprint.policy_sha256!,
        });
      });
    },
  });
}

Deno.test({
  name: "policy render never prints an env value, from the policy's env list or from --env",
  ignore: !HAS_BWRAP,
  fn: async () => {
    await withTempDir(async (dir) => {
      const secret = "specter-render-secret-4b1d";
      const other = "specter-render-other-9c2e";
      const file = `${dir}/env.json`;
      await Deno.writeTextFile(file, JSON.stringify({ version: 1, env: ["SPECTER_RENDER_SECRET"] }));
      const args = ["policy", "render", file, "--backend", "bwrap", "--cwd", dir, "--env", `EXTRA=${other}`];
      const env = { SPECTER_RENDER_SECRET: secret };
      const human = await specterWithEnv(env, ...args, "--", "/bin/echo", "hi");
      const json = await specterWithEnv(env, ...args, "--json", "--", "/bin/echo", "hi");
      for (const result of [human, json]) {
        assert.equal(result.code, 0, result.stderr);
        assert.ok(
          !result.stdout.includes(secret) && !result.stderr.includes(secret),
          "the policy env value leaked",
        );
        assert.ok(!result.stdout.includes(other) && !result.stderr.includes(other), "the --env value leaked");
      }
      assert.match(human.stdout, /^ {4}--setenv SPECTER_RENDER_SECRET '<redacted>' \\$/m);
      assert.match(human.stdout, /^ {4}--setenv EXTRA '<redacted>' \\$/m);
      assert.match(human.stdout, /^ {4}-- \/bin\/echo hi$/m);

      // The same options in this process (the variable set here too) give the same fingerprint.
      Deno.env.set("SPECTER_RENDER_SECRET", secret);
      try {
        const { plan } = prepareLaunch(
          runOptions(file, dir, "bwrap", ["/bin/echo", "hi"], undefined, { EXTRA: other }),
        );
        assert.deepEqual(JSON.parse(json.stdout).fingerprint, fingerprintPlan(plan));
      } finally {
        Deno.env.delete("SPECTER_RENDER_SECRET");
      }
    });
  },
});

Deno.test({
  name: "policy render --strict-write and --shell change the plan the way they change a run",
  ignore: !HAS_BWRAP,
  fn: async () => {
    await withTempDir(async (dir) => {
      await Deno.mkdir(`${dir}/.git`);
      const base = ["policy", "render", "workspace", "--cwd", dir, "--ack-unsafe-write", "--json"];
      const plain = JSON.parse((await specter(...base, "--", "echo", "a b")).stdout);
      const strict = JSON.parse(
        (await specter(...base, "--strict-write", "--shell", "--", "echo", "a b")).stdout,
      );
      assert.notEqual(plain.fingerprint.argv_sha256, strict.fingerprint.argv_sha256);
      const real = await Deno.realPath(dir);
      const at = strict.argv.indexOf(`${real}/.git`);
      // Protected by descriptor: `--ro-bind-fd N <dir>/.git`, and listed with its identity.
      assert.ok(at > 1 && strict.argv[at - 2] === "--ro-bind-fd", JSON.stringify(strict.argv));
      assert.ok(
        strict.descriptors.some((d: { path: string; purpose: string; writable: boolean }) =>
          d.path === `${real}/.git` && d.purpose === "protect" && !d.writable
        ),
      );
      assert.deepEqual(strict.argv.slice(-3), ["/bin/sh", "-c", "echo a b"]);
      const options = runOptions("workspace", dir, "bwrap", ["echo", "a b"], {
        unsafeWrite: true,
        network: false,
      });
      const { plan } = prepareLaunch(
        { ...options, shell: true, sandbox: { ...options.sandbox!, strictWrite: true } } as SpawnOptions,
      );
      assert.deepEqual(strict.fingerprint, fingerprintPlan(plan));
    });
  },
});

Deno.test({
  name: "policy render --max-memory and a policy budget add the prlimit launcher, as in a run",
  ignore: !HAS_BWRAP,
  fn: async () => {
    await withTempDir(async (dir) => {
      const file = `${dir}/budget.toml`;
      await Deno.writeTextFile(file, "version = 1\n[budgets]\nprocesses = 20\n");
      const result = await specter("policy", "render", file, "--cwd", dir, "--max-memory", "64M", "--json");
      assert.equal(result.code, 0, result.stderr);
      const rendering = JSON.parse(result.stdout);
      // What bwrap executes: everything after "--seccomp 3 --block-fd 4 --info-fd 5 --".
      // On a terminal the program leads its own session first (setsid --ctty), then prlimit sets the limits.
      const command = rendering.argv.slice(rendering.argv.indexOf("--info-fd") + 3);
      assert.match(command[0], /\/setsid$/);
      assert.deepEqual(command.slice(1, 4), ["--ctty", "--wait", "--"]);
      const launcher = command.slice(4);
      assert.match(launcher[0], /\/prlimit$/);
      assert.deepEqual(launcher.slice(-2), ["--", "/bin/sh"]);
      assert.ok(launcher.includes(`--as=${64 * 1024 * 1024 * 4}`), JSON.stringify(launcher));
      // The process budget: a pids cgroup where the host offers one, else an RLIMIT_NPROC backstop.
      assert.equal(
        launcher.some((arg: string) => arg.startsWith("--nproc=")),
        !kernelEnforces("processes"),
        JSON.stringify(launcher),
      );

      const options = runOptions(file, dir, "bwrap", ["/bin/sh"]);
      const { plan } = prepareLaunch({ ...options, limits: { memoryBytes: 64 * 1024 * 1024 } });
      assert.deepEqual(rendering.fingerprint, fingerprintPlan(plan));
      assert.deepEqual(rendering.argv, redactedArgv(plan.argv));
    });
  },
});

Deno.test("policy render of a program that does not exist fails like a run: E_SPAWN_NOT_FOUND, exit 127", async () => {
  const result = await specter(
    "policy",
    "render",
    "strict",
    "--backend",
    "seatbelt",
    "--",
    "no-such-program-xyz",
  );
  assert.equal(result.code, 127, result.stderr);
  assert.match(result.stderr, /^specter: E_SPAWN_NOT_FOUND: Program "no-such-program-xyz" was not found/);
  assert.equal(result.stdout, "");
});

for (const name of PRESET_NAMES) {
  Deno.test({
    name: `policy render ${name} --backend seatbelt prints the profile a run would use (text only on Linux)`,
    fn: async () => {
      await withTempDir(async (dir) => {
        const secret = "specter-seatbelt-secret-77aa";
        const flags = [
          "--backend",
          "seatbelt",
          "--cwd",
          dir,
          "--env",
          `EXTRA=${secret}`,
          ...presetFlags(name),
        ];
        const human = await specter("policy", "render", name, ...flags);
        assert.equal(human.code, 0, human.stderr);
        const json = await specter("policy", "render", name, ...flags, "--json");
        assert.equal(json.code, 0, json.stderr);
        for (const result of [human, json]) assert.ok(!result.stdout.includes(secret), "an env value leaked");
        const rendering = JSON.parse(json.stdout);
        const acks = { unsafeWrite: name === "workspace", network: false };
        const { plan } = prepareLaunch(
          runOptions(name, dir, "seatbelt", ["/bin/sh"], acks, { EXTRA: secret }),
        );
        assert.equal(rendering.backend, "seatbelt");
        assert.equal(rendering.seccomp, undefined);
        assert.equal(plan.argv[0], SANDBOX_EXEC);
        assert.equal(rendering.profile, plan.argv[2]);
        assert.deepEqual(rendering.fingerprint, fingerprintPlan(plan));
        assert.match(rendering.profile, /\(deny default\)/);
        assert.ok(
          human.stdout.includes(`\n${rendering.profile.replace(/\n$/, "")}\n`),
          "the profile is printed verbatim",
        );
        assert.deepEqual(printedFingerprint(human.stdout).argv_sha256, rendering.fingerprint.argv_sha256);
      });
    },
  });
}

Deno.test("a Seatbelt launch gets its private temp directory: writable in the profile and TMPDIR", async () => {
  await withTempDir(async (dir) => {
    const tmp = await Deno.realPath(await Deno.makeTempDir({ dir }));
    const options = runOptions("basic", dir, "seatbelt", ["/bin/echo", "hi"]);
    let made = 0;
    const { plan } = prepareLaunch(options, { privateTmp: () => (made++, tmp) });
    assert.equal(made, 1);
    assert.equal(plan.env.TMPDIR, tmp);
    const profile = plan.argv[plan.argv.indexOf("-p") + 1]!;
    assert.match(profile, new RegExp(`\\(allow file-read\\* file-write\\*[^)]*\\(subpath "${tmp}"\\)`));
    assert.ok(!profile.includes("No private temp dir"));

    // Rendering (no temp directory asked for) shows the profile without one, and says so.
    const rendered = prepareLaunch(options).plan;
    assert.equal(rendered.env.TMPDIR, undefined);
    assert.ok(rendered.argv[rendered.argv.indexOf("-p") + 1]!.includes("No private temp dir"));
    // Other backends never ask for one.
    if (HAS_BWRAP) {
      prepareLaunch(runOptions("basic", dir, "bwrap", ["/bin/echo"]), { privateTmp: () => (made++, tmp) });
      assert.equal(made, 1);
    }
  });
});
