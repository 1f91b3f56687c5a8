/**
 * The CI integration: scripts/ci/action.sh (what the GitHub Action and the GitLab template run) run for
 * real, with its inputs as environment variables and no GitHub or GitLab around it; and the shape of
 * action.yml and ci/gitlab/specter.gitlab-ci.yml (inputs only through `env:`, artifacts kept on failure).
 */
import assert from "node:assert/strict";
import { dirname } from "node:path";
import { parse as parseYaml } from "yaml";
import { verifyChecksums } from "../src/artifacts/bundle.ts";
import { DENO, ROOT, withTempDir } from "./_helpers.ts";

const SCRIPT = `${ROOT}/scripts/ci/action.sh`;
const PINNED_DENO = /^DENO_VERSION=(.+)$/m.exec(Deno.readTextFileSync(`${ROOT}/scripts/dev`))?.[1];

/** The inputs the script reads; each test sets all of them so the caller's environment cannot leak in. */
const NO_INPUTS: Readonly<Record<string, string>> = {
  SPECTER_SCENARIOS: "",
  SPECTER_VERIFY: "",
  SPECTER_ARGS: "",
  SPECTER_ARTIFACTS_DIR: "",
  SPECTER_DENO_VERSION: "",
  SPECTER_TOOLS_DIR: "",
  SPECTER_INSTALL_PACKAGES: "false",
  GITHUB_STEP_SUMMARY: "",
  GITHUB_ACTIONS: "",
  RUNNER_ENVIRONMENT: "",
};

/**
 * Writes `DIR/bin/npm`, a stand-in that logs its arguments to `DIR/npm.log`. With `install`, it "installs"
 * the test's own deno where `npm install --prefix P deno@V` would put it (nothing is downloaded); without,
 * it fails. Returns a PATH with it first and no deno on it unless `withDeno`.
 */
async function fakeNpm(dir: string, install: boolean, withDeno: boolean): Promise<string> {
  await Deno.mkdir(`${dir}/bin`);
  const link = `mkdir -p "$prefix/node_modules/deno" && ln -s '${DENO}' "$prefix/node_modules/deno/deno"`;
  await Deno.writeTextFile(
    `${dir}/bin/npm`,
    `#!/bin/sh\nprintf '%s\\n' "$*" >> '${dir}/npm.log'\nprefix=\nwhile [ $# -gt 0 ]; do\n` +
      `  if [ "$1" = --prefix ]; then prefix=$2; shift; fi\n  shift\ndone\n` +
      (install ? `${link}\n` : "exit 1\n"),
    { mode: 0o755 },
  );
  return [`${dir}/bin`, ...(withDeno ? [dirname(DENO)] : []), "/usr/bin", "/bin"].join(":");
}

/** What npm was asked to do, one line per call ("" when it never ran). */
async function npmCalls(dir: string): Promise<string> {
  return await Deno.readTextFile(`${dir}/npm.log`).catch(() => "");
}

/** Runs `bash args…` in `cwd` with `env` over {@link NO_INPUTS}. */
async function bash(
  args: string[],
  cwd: string,
  env: Readonly<Record<string, string>>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command("/bin/bash", {
    args,
    cwd,
    env: { ...NO_INPUTS, ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** Runs scripts/ci/action.sh in `cwd` with `env`. */
function action(cwd: string, env: Readonly<Record<string, string>>) {
  return bash([SCRIPT], cwd, env);
}

/** Fails with the script's output when its exit code is not `code`. */
function assertExit(result: { code: number; stdout: string; stderr: string }, code: number): void {
  assert.equal(result.code, code, `exit ${result.code}\n${result.stdout}\n${result.stderr}`);
}

/** `value` as an object, failing the test when it is not one. */
function obj(value: unknown, what: string): Record<string, unknown> {
  assert.ok(typeof value === "object" && value !== null && !Array.isArray(value), `${what} is not a map`);
  return value as Record<string, unknown>;
}

/** `value` as a list, failing the test when it is not one. */
function list(value: unknown, what: string): unknown[] {
  assert.ok(Array.isArray(value), `${what} is not a list`);
  return value;
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

Deno.test("ci action: passing scenarios exit 0, with a checksummed bundle each, named in the summary", async () => {
  await withTempDir(async (dir) => {
    const path = await fakeNpm(dir, false, true);
    const result = await action(dir, {
      PATH: path,
      // A glob and a plain path, on two lines.
      SPECTER_SCENARIOS: `${ROOT}/fixtures/scenarios/m*u.yaml\n  ${ROOT}/fixtures/scenarios/prompt.yaml\n`,
      GITHUB_STEP_SUMMARY: `${dir}/step-summary.md`,
    });
    assertExit(result, 0);
    assert.equal(await npmCalls(dir), "", "deno on PATH is the pinned version: npm is not run");
    assert.match(result.stderr, new RegExp(`deno ${PINNED_DENO}: ${DENO}`));
    assert.match(result.stdout, /PASSED {2}10\/10 steps/);
    for (const bundle of ["test/01-menu", "test/02-prompt"]) {
      const at = `${dir}/specter-artifacts/${bundle}`;
      assert.equal(verifyChecksums(at).ok, true, `${bundle} is a complete bundle`);
      assert.equal(JSON.parse(await Deno.readTextFile(`${at}/run.json`)).status, "Passed");
      assert.match(await Deno.readTextFile(`${at}.log`), /PASSED/);
    }
    const summary = await Deno.readTextFile(`${dir}/step-summary.md`);
    assert.equal(summary, await Deno.readTextFile(`${dir}/specter-artifacts/summary.md`));
    assert.match(summary, /^## Specter: PASSED\n/);
    assert.match(
      summary,
      /\| `[^`]*\/menu\.yaml` \| ✅ PASSED \(exit 0\) \| `specter-artifacts\/test\/01-menu` \|/,
    );
    assert.match(summary, /`specter-artifacts\/test\/02-prompt`/);
  });
});

Deno.test("ci action: a drifted golden fails the job with the diff (log, artifacts, summary)", async () => {
  await withTempDir(async (dir) => {
    const path = await fakeNpm(dir, false, true);
    const cmd = `-- printf 'hello\\nworld\\n'`;
    // Two goldens of the same screen, then one of them altered.
    assertExit(
      await action(dir, {
        PATH: path,
        SPECTER_VERIFY: `same.txt --update ${cmd}\nchanged.txt --update ${cmd}`,
      }),
      0,
    );
    const golden = await Deno.readTextFile(`${dir}/changed.txt`);
    assert.match(golden, /\nhello\nworld\n/);
    await Deno.writeTextFile(`${dir}/changed.txt`, golden.replace("world", "WORLD"));

    const result = await action(dir, {
      PATH: path,
      SPECTER_VERIFY: `# the goldens\nsame.txt ${cmd}\n\nchanged.txt ${cmd}\n`,
      SPECTER_ARTIFACTS_DIR: "out",
      GITHUB_STEP_SUMMARY: `${dir}/step-summary.md`,
      GITHUB_ACTIONS: "true",
    });
    assertExit(result, 1);
    // On GitHub, what the programs print cannot issue workflow commands: they are off around each run.
    assert.match(result.stdout, /^::stop-commands::([0-9a-f]{32})\nverify: OK[^\n]*\n::\1::\n/);
    assert.match(
      result.stdout,
      /\n::stop-commands::([0-9a-f]{32})\n--- changed\.txt\n[^:]*verify: DRIFT[^\n]*\n::\1::\n$/,
    );
    assert.match(result.stdout, /-WORLD\n\+world\n/);
    assert.match(result.stdout, /verify: DRIFT/);
    assert.match(result.stderr, /FAILED \(exit 1\): 0 scenario\(s\): 0 passed; 2 golden\(s\): 1 matched/);
    assert.match(await Deno.readTextFile(`${dir}/out/verify/01-same.log`), /verify: OK/);
    assert.match(await Deno.readTextFile(`${dir}/out/verify/02-changed.log`), /-WORLD\n\+world\n/);
    const summary = await Deno.readTextFile(`${dir}/step-summary.md`);
    assert.match(summary, /^## Specter: FAILED \(exit 1\)\n/);
    assert.match(summary, /\| `same\.txt` \| ✅ OK \(exit 0\) \|/);
    assert.match(summary, /\| `changed\.txt` \| ❌ DRIFT \(exit 1\) \| `out\/verify\/02-changed\.log` \|/);
    assert.match(summary, /<summary>DRIFT: `changed\.txt`<\/summary>\n\n~~~~diff\n[\s\S]*-WORLD\n\+world\n/);
  });
});

Deno.test("ci action: inputs with shell metacharacters are data, never executed", async () => {
  await withTempDir(async (dir) => {
    const path = await fakeNpm(dir, false, true);
    const scenario = "version: 1\nname: oddly named\nrun:\n  argv: [/usr/bin/true]\nsteps:\n" +
      "  - wait_for: { exit: true }\n  - expect: { exit_code: 0 }\n";
    const names = ["$(touch${IFS}p1).yaml", "`touch${IFS}p2`.yaml", "x;touch${IFS}p3;y.yaml", "-dash.yaml"];
    for (const name of names) await Deno.writeTextFile(`${dir}/${name}`, scenario);
    const artifacts = "out;touch p4 $(touch p5)";
    const result = await action(dir, {
      PATH: path,
      SPECTER_SCENARIOS: names.join("\n"),
      SPECTER_VERIFY:
        "evil.txt --update -- echo '$(touch p6)' ';' 'touch p7' '`touch p8`' | touch p9 && touch p10",
      SPECTER_ARTIFACTS_DIR: artifacts,
    });
    assertExit(result, 0);
    assert.match(
      await Deno.readTextFile(`${dir}/evil.txt`),
      /\n\$\(touch p6\) ; touch p7 `touch p8` \| touch p9 && touch p10\n/,
      "the words reach the program literally",
    );
    // Bundles are named after the files, with anything but [A-Za-z0-9._-] replaced.
    for (const [i, name] of names.entries()) {
      const bundle = `0${i + 1}-${name.replace(/\.yaml$/, "").replace(/[^A-Za-z0-9._-]/g, "_")}`;
      assert.equal(verifyChecksums(`${dir}/${artifacts}/test/${bundle}`).ok, true, bundle);
    }
    // Extra flags are split into words, not evaluated: `$(touch` is then an unknown scenario (usage, 2).
    const args = await action(dir, {
      PATH: path,
      SPECTER_SCENARIOS: "-dash.yaml",
      SPECTER_ARGS: "$(touch p11)",
    });
    assertExit(args, 2);
    assert.match(args.stdout, /\$\(touch/);
    // A glob that matches nothing, or an unmatched quote, is bad usage before anything runs.
    assertExit(await action(dir, { PATH: path, SPECTER_SCENARIOS: "$(touch p12)*" }), 2);
    assertExit(await action(dir, { PATH: path, SPECTER_VERIFY: "g.txt -- echo 'a;touch p13" }), 2);
    const planted = [];
    for (let i = 1; i <= 13; i++) if (await exists(`${dir}/p${i}`)) planted.push(`p${i}`);
    assert.deepEqual(planted, [], "no command in an input ran");
  });
});

Deno.test("ci action: action.yml passes inputs only through env: and uploads the artifacts always", async () => {
  const action = obj(parseYaml(await Deno.readTextFile(`${ROOT}/action.yml`)), "action.yml");
  const inputs = obj(action.inputs, "inputs");
  for (const name of ["scenarios", "verify", "args", "artifacts-dir", "upload", "deno-version"]) {
    assert.ok(name in inputs, `input ${name}`);
  }
  assert.equal(obj(inputs["artifacts-dir"], "artifacts-dir").default, "specter-artifacts");
  assert.equal(
    obj(inputs["deno-version"], "deno-version").default,
    PINNED_DENO,
    "the version scripts/dev pins",
  );
  const runs = obj(action.runs, "runs");
  assert.equal(runs.using, "composite");
  const steps = list(runs.steps, "steps").map((s, i) => obj(s, `step ${i}`));
  const script = await Deno.readTextFile(SCRIPT);
  for (const step of steps) {
    if (typeof step.run === "string") assert.doesNotMatch(step.run, /\$\{\{/, "no expression in a script");
  }
  const run = steps.filter((s) => typeof s.run === "string");
  assert.equal(run.length, 1, "one script step");
  assert.equal(run[0]!.run, 'bash "$GITHUB_ACTION_PATH/scripts/ci/action.sh"');
  assert.equal(run[0]!.shell, "bash");
  const env = obj(run[0]!.env, "env");
  const passed = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    const input = /^\$\{\{ inputs\.([a-z-]+) \}\}$/.exec(String(value))?.[1];
    assert.ok(input !== undefined && input in inputs, `${name} is one input, as is`);
    assert.match(script, new RegExp(`\\$\\{${name}:-`), `the script reads ${name}`);
    passed.add(input);
  }
  assert.deepEqual([...passed].sort(), ["args", "artifacts-dir", "deno-version", "scenarios", "verify"]);
  const upload = steps.find((s) =>
    typeof s.uses === "string" && s.uses.startsWith("actions/upload-artifact@")
  );
  assert.ok(upload !== undefined, "an upload step");
  assert.equal(upload.uses, "actions/upload-artifact@v4");
  assert.equal(upload.if, "always() && inputs.upload == 'true'");
  assert.equal(obj(upload.with, "with").path, "${{ inputs.artifacts-dir }}");
});

Deno.test("ci action: the GitLab template's .specter job runs the same script and keeps artifacts always", async () => {
  const template = obj(
    parseYaml(await Deno.readTextFile(`${ROOT}/ci/gitlab/specter.gitlab-ci.yml`)),
    "template",
  );
  const job = obj(template[".specter"], ".specter");
  const variables = obj(job.variables, "variables");
  for (const name of ["SPECTER_SCENARIOS", "SPECTER_VERIFY", "SPECTER_ARGS", "SPECTER_ARTIFACTS_DIR"]) {
    assert.ok(name in variables, name);
  }
  assert.equal(variables.SPECTER_ARTIFACTS_DIR, "specter-artifacts");
  assert.match(String(variables.SPECTER_APT_PACKAGES), /\bbubblewrap\b/);
  assert.deepEqual(list(job.script, "script"), ['bash "$SPECTER_HOME/scripts/ci/action.sh"']);
  const artifacts = obj(job.artifacts, "artifacts");
  assert.equal(artifacts.when, "always");
  assert.deepEqual(artifacts.paths, ["$SPECTER_ARTIFACTS_DIR"]);

  // Its script (after the apt-get step) for real, in a checkout of Specter, with no deno on PATH: Deno
  // comes from npm (a stand-in that links the test's deno), once, into SPECTER_TOOLS_DIR.
  await withTempDir(async (dir) => {
    const path = await fakeNpm(dir, true, false);
    const lines = [...list(job.before_script, "before_script").slice(1), ...list(job.script, "script")];
    const env = {
      ...Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, String(v)])),
      SPECTER_HOME: ROOT,
      SPECTER_VERIFY: "screen.txt --update -- printf 'gitlab\\n'",
      SPECTER_TOOLS_DIR: `${dir}/tools`,
      PATH: path,
    };
    for (let run = 0; run < 2; run++) {
      const result = await bash(["-eo", "pipefail", "-c", lines.join("\n")], dir, env);
      assertExit(result, 0);
    }
    const prefix = `${dir}/tools/deno-${PINNED_DENO}`;
    assert.equal(
      await npmCalls(dir),
      `install --silent --no-audit --no-fund --no-save --prefix ${prefix} deno@${PINNED_DENO}\n`,
      "installed once, then reused",
    );
    assert.match(await Deno.readTextFile(`${dir}/screen.txt`), /\ngitlab\n/);
    assert.ok(await exists(`${dir}/specter-artifacts/verify/01-screen.log`));
  });
});
