/**
 * Strict-write protects `.git`, `.envrc` and friends at any depth of a write grant (nested repositories,
 * `sub/.envrc`), through the real CLI under bwrap: every way a program would rewrite them fails and the
 * host files are unchanged (and the same program does change them without `--strict-write`, so the
 * attack is real). Names created during the run are reported, also one planted under the path of an
 * original that was moved away with its parent; a hostile tree that would make the walk
 * unbounded is refused before the program starts.
 */
import assert from "node:assert/strict";
import { runCli, sessionTest } from "../_helpers.ts";
import { withHostDir } from "./_sandbox.ts";

async function policyFile(dir: string, write: string): Promise<string> {
  const path = `${dir}/policy.json`;
  await Deno.writeTextFile(
    path,
    JSON.stringify({ version: 1, exec: ["/usr/bin", "/bin"], fs: { write: [write] } }),
  );
  return path;
}

/** `specter exec` of `sh -c script` under `policy`, with `--strict-write` unless `strict` is false. */
function execSh(dir: string, policy: string, script: string, strict = true) {
  return runCli([
    "exec",
    "--policy",
    policy,
    "--ack-unsafe-write",
    ...(strict ? ["--strict-write"] : []),
    "--artifacts",
    `${dir}/art`,
    "--",
    "sh",
    "-c",
    script,
  ]);
}

/** A workspace with a nested repository's hook and a nested .envrc (and a file anyone may write). */
async function workspace(dir: string): Promise<string> {
  const ws = `${dir}/ws`;
  await Deno.mkdir(`${ws}/libs/vendor/repo/.git/hooks`, { recursive: true });
  await Deno.mkdir(`${ws}/sub/deeper`, { recursive: true });
  await Deno.writeTextFile(`${ws}/libs/vendor/repo/.git/hooks/pre-commit`, "#!/bin/sh\nexit 0\n");
  await Deno.writeTextFile(`${ws}/libs/vendor/repo/.git/config`, "[core]\n");
  await Deno.writeTextFile(`${ws}/sub/.envrc`, "export SAFE=1\n");
  await Deno.writeTextFile(`${ws}/sub/deeper/.npmrc`, "registry=https://registry.npmjs.org/\n");
  await Deno.writeTextFile(`${ws}/sub/notes.txt`, "free\n");
  return ws;
}

/** Every way to rewrite the protected files; each prints what got through. */
function attack(ws: string): string {
  const hook = `${ws}/libs/vendor/repo/.git/hooks/pre-commit`;
  const envrc = `${ws}/sub/.envrc`;
  const npmrc = `${ws}/sub/deeper/.npmrc`;
  return [
    `echo pwned > "${hook}" && echo GOT hook-write`,
    `echo pwned >> "${envrc}" && echo GOT envrc-append`,
    // Not `:` (a special builtin: a failed redirection would end the shell before the other attempts).
    `true > "${npmrc}" && echo GOT npmrc-truncate`,
    `rm -f "${envrc}"; [ -e "${envrc}" ] || echo GOT envrc-rm`,
    `mv "${ws}/sub/.envrc" "${ws}/sub/moved" 2>/dev/null && echo GOT envrc-mv`,
    `mv "${ws}/libs/vendor/repo/.git" "${ws}/libs/vendor/repo/old" 2>/dev/null && echo GOT git-mv`,
    `echo x > "${ws}/libs/vendor/repo/.git/hooks/post-checkout" && echo GOT hook-new`,
    `chmod 777 "${hook}" 2>/dev/null && echo GOT hook-chmod`,
    `echo pwned > "${ws}/sub/tmp" && mv -f "${ws}/sub/tmp" "${envrc}" 2>/dev/null && echo GOT envrc-replace`,
    `echo changed > "${ws}/sub/notes.txt" && echo FREE-WRITE`,
    "echo end",
  ].join("; ");
}

async function unchanged(ws: string): Promise<void> {
  assert.equal(
    await Deno.readTextFile(`${ws}/libs/vendor/repo/.git/hooks/pre-commit`),
    "#!/bin/sh\nexit 0\n",
  );
  assert.equal(await Deno.readTextFile(`${ws}/sub/.envrc`), "export SAFE=1\n");
  assert.equal(await Deno.readTextFile(`${ws}/sub/deeper/.npmrc`), "registry=https://registry.npmjs.org/\n");
  await assert.rejects(Deno.lstat(`${ws}/libs/vendor/repo/.git/hooks/post-checkout`));
}

sessionTest(
  "nested .git/hooks/pre-commit, sub/.envrc and a deeper .npmrc cannot be modified in strict-write",
  async () => {
    await withHostDir(async (dir) => {
      const ws = await workspace(dir);
      const policy = await policyFile(dir, ws);
      const { code, stdout, stderr } = await execSh(dir, policy, attack(ws));
      assert.equal(code, 0, `${stderr}${stdout}`);
      const result = JSON.parse(stdout);
      assert.match(result.output, /end/, result.output); // Every attempt was made.
      assert.doesNotMatch(result.output, /GOT /, result.output);
      assert.match(result.output, /FREE-WRITE/, result.output); // The grant itself works.
      await unchanged(ws);
      assert.deepEqual(result.protected_created, []);
    });
  },
);

sessionTest("without --strict-write the same attack gets through (the test above can fail)", async () => {
  await withHostDir(async (dir) => {
    const ws = await workspace(dir);
    const policy = await policyFile(dir, ws);
    const { stdout } = await execSh(dir, policy, attack(ws), false);
    const output = JSON.parse(stdout).output;
    assert.match(output, /GOT hook-write/, output);
    assert.match(output, /GOT npmrc-truncate/, output);
    assert.match(output, /GOT git-mv/, output);
    assert.equal(await Deno.readTextFile(`${ws}/libs/vendor/repo/old/hooks/pre-commit`), "pwned\n");
  });
});

sessionTest(
  "protected names created during a strict-write run are reported (exec result, exit frame, audit)",
  async () => {
    await withHostDir(async (dir) => {
      const ws = await workspace(dir);
      const policy = await policyFile(dir, ws);
      const script = `mkdir -p "${ws}/a/b/c" && echo 'eval evil' > "${ws}/a/b/c/.envrc";
      mkdir -p "${ws}/new/.git/hooks"; echo plain > "${ws}/a/plain"`;
      const exec = await execSh(dir, policy, script);
      assert.equal(exec.code, 0, exec.stderr);
      const created = [`${ws}/a/b/c/.envrc`, `${ws}/new/.git`];
      assert.deepEqual(JSON.parse(exec.stdout).protected_created, created);
      assert.match(exec.stderr, /warning: the program created protected names \(strict-write\)/);
      assert.ok(exec.stderr.includes(`${ws}/a/b/c/.envrc`), exec.stderr);
      const records = (await Deno.readTextFile(`${dir}/art/audit.ndjson`)).trim().split("\n").map((l) =>
        JSON.parse(l)
      );
      const report = records.find((r) => r.event === "protected_created");
      assert.deepEqual(report?.paths, created);
      assert.equal((await runCli(["audit", "verify", `${dir}/art`])).code, 0);

      // `run`: the exit frame carries the list. The names now exist, so they are protected, not new.
      const run = await runCli([
        "run",
        "--policy",
        policy,
        "--ack-unsafe-write",
        "--strict-write",
        "--artifacts",
        `${dir}/art2`,
        "--",
        "sh",
        "-c",
        `echo again >> "${ws}/a/b/c/.envrc"; touch "${ws}/a/.gitconfig"`,
      ]);
      const exit = run.frames.find((f) => f.type === "exit")!;
      assert.deepEqual(exit.protected_created, [`${ws}/a/.gitconfig`]);
      assert.equal(await Deno.readTextFile(`${ws}/a/b/c/.envrc`), "eval evil\n");
    });
  },
);

sessionTest("symlinks are never followed by the walk: a link named .envrc and link loops", async () => {
  await withHostDir(async (dir) => {
    const ws = await workspace(dir);
    await Deno.writeTextFile(`${dir}/outside`, "host file\n");
    await Deno.symlink(`${dir}/outside`, `${ws}/sub/deeper/.envrc`);
    await Deno.symlink(".", `${ws}/sub/loop`);
    await Deno.symlink(`${ws}/l2`, `${ws}/l1`);
    await Deno.symlink(`${ws}/l1`, `${ws}/l2`);
    await Deno.symlink(ws, `${ws}/sub/up`);
    const policy = await policyFile(dir, ws);
    const started = performance.now();
    const { code, stdout, stderr } = await execSh(
      dir,
      policy,
      `echo pwned > "${ws}/sub/up/sub/.envrc" && echo GOT via-link; echo end`,
    );
    assert.equal(code, 0, stderr);
    assert.ok(performance.now() - started < 15_000);
    assert.doesNotMatch(JSON.parse(stdout).output, /GOT/);
    assert.equal(await Deno.readTextFile(`${ws}/sub/.envrc`), "export SAFE=1\n");
    assert.equal(await Deno.readTextFile(`${dir}/outside`), "host file\n");
  });
});

sessionTest(
  "a tree deeper than the walk's cap is refused before the program starts (E_POLICY_PROTECT_LIMIT)",
  async () => {
    await withHostDir(async (dir) => {
      const ws = `${dir}/ws`;
      await Deno.mkdir(`${ws}/${Array.from({ length: 70 }, (_, i) => `d${i}`).join("/")}`, {
        recursive: true,
      });
      const policy = await policyFile(dir, ws);
      const { code, stderr } = await execSh(dir, policy, `touch "${ws}/ran"`);
      assert.equal(code, 2, stderr);
      assert.match(stderr, /E_POLICY_PROTECT_LIMIT: Strict-write cannot check every protected name/);
      assert.match(stderr, /deeper than 64 levels/);
      await assert.rejects(Deno.lstat(`${ws}/ran`));
      // Without strict-write the tree is just a tree.
      const plain = await runCli([
        "exec",
        "--policy",
        policy,
        "--ack-unsafe-write",
        "--artifacts",
        `${dir}/art2`,
        "--",
        "true",
      ]);
      assert.equal(plain.code, 0, plain.stderr);
    });
  },
);

// Found by an attack review: the read-only bind sits on the name, its parent is an ordinary directory.
const HOOK = "#!/bin/sh\nexit 0\n";
const ENVRC = "export SAFE=1\n";

sessionTest(
  "strict-write: renaming a protected name's parent does not let the program replace it unreported",
  async () => {
    await withHostDir(async (dir) => {
      const ws = `${dir}/ws`;
      await Deno.mkdir(`${ws}/libs/repo/.git/hooks`, { recursive: true });
      await Deno.mkdir(`${ws}/sub`, { recursive: true });
      await Deno.writeTextFile(`${ws}/libs/repo/.git/hooks/pre-commit`, HOOK);
      await Deno.writeTextFile(`${ws}/sub/.envrc`, ENVRC);
      const policy = await policyFile(dir, ws);
      const script = [
        `cd "${ws}"`,
        "mv libs libs2 && echo GOT mv-libs",
        "mkdir -p libs/repo/.git/hooks && printf '#!/bin/sh\\necho PWNED\\n' > libs/repo/.git/hooks/pre-commit" +
        " && echo GOT planted-hook",
        "mv sub sub2 && echo GOT mv-sub",
        "mkdir sub && echo 'echo PWNED' > sub/.envrc && echo GOT planted-envrc",
        "echo end",
      ].join("; ");
      const { code, stdout, stderr } = await execSh(dir, policy, script);
      assert.equal(code, 0, `${stderr}${stdout}`);
      const result = JSON.parse(stdout);
      assert.match(result.output, /end/, result.output);
      const reported: string[] = result.protected_created ?? [];
      const hookPath = `${ws}/libs/repo/.git/hooks/pre-commit`;
      const envrcPath = `${ws}/sub/.envrc`;
      const hookNow = await Deno.readTextFile(hookPath).catch(() => null);
      const envrcNow = await Deno.readTextFile(envrcPath).catch(() => null);
      const hookOk = hookNow === HOOK || reported.some((p) => hookPath.startsWith(p));
      const envrcOk = envrcNow === ENVRC || reported.includes(envrcPath);
      assert.ok(
        hookOk && envrcOk,
        `the protected paths hold the program's files and the run does not name them:\n` +
          `${hookPath}: ${JSON.stringify(hookNow)}\n${envrcPath}: ${JSON.stringify(envrcNow)}\n` +
          `protected_created: ${JSON.stringify(reported)}\n${result.output}`,
      );
    });
  },
);
