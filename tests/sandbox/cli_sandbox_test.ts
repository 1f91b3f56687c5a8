/**
 * The sandbox from the command line: on by default, never silently downgraded, acknowledged opt-outs.
 */
import assert from "node:assert/strict";
import { ROOT, runCli, sessionTest, withTempDir } from "../_helpers.ts";

sessionTest("specter run with no sandbox flags runs under bwrap with the strict preset", async () => {
  const { code, frames } = await runCli([
    "run",
    "--",
    "bash",
    "-c",
    "echo inside; ls /usr/bin >/dev/null 2>&1 || echo no-ls",
  ]);
  assert.equal(code, 0);
  assert.equal(frames[0]!.sandbox, "bwrap");
  assert.equal(frames[0]!.policy, "preset:strict");
  const text = frames.filter((f) => f.type === "stdout").map((f) => f.data).join("");
  assert.match(text, /inside/);
});

sessionTest(
  "a missing bwrap fails with E_SANDBOX_UNAVAILABLE and the fix, never running unsandboxed",
  async () => {
    const { code, frames, stderr } = await runCli(["run", "--", "touch", "/tmp/specter-must-not-exist"], "", {
      SPECTER_BWRAP: "/nonexistent/bwrap",
    });
    assert.equal(code, 125);
    assert.equal(frames[0]!.code, "E_SANDBOX_UNAVAILABLE");
    assert.match(stderr, /apt-get install bubblewrap/);
    assert.equal(frames.some((f) => f.type === "start"), false);
    await assert.rejects(Deno.stat("/tmp/specter-must-not-exist"));
  },
);

sessionTest("sandbox probe reports bwrap, and its absence with the fix", async () => {
  const ok = await runCli(["sandbox", "probe", "--json"]);
  const report = JSON.parse(ok.stdout);
  assert.equal(ok.code, 0);
  assert.equal(report.auto, "bwrap");
  assert.equal(report.usable, true);
  const missing = await runCli(["sandbox", "probe"], "", { SPECTER_BWRAP: "/nonexistent/bwrap" });
  assert.equal(missing.code, 1);
  assert.match(missing.stdout, /fix: Install bubblewrap/);
});

sessionTest("--sandbox external needs its ack and then runs the program directly", async () => {
  const refused = await runCli(["run", "--sandbox", "external", "--", "true"]);
  assert.equal(refused.code, 2);
  const ran = await runCli(["run", "--sandbox", "external", "--ack-external-sandbox", "--", "true"]);
  assert.equal(ran.code, 0);
  assert.equal(ran.frames[0]!.sandbox, "external");
});

sessionTest("policy files from the CLI: writes need --ack-unsafe-write, then they work", async () => {
  await withTempDir(async (tmp) => {
    const dir = await Deno.makeTempDir({ dir: ROOT, prefix: ".specter-cli-sandbox-" });
    try {
      const file = `${tmp}/policy.toml`;
      await Deno.writeTextFile(file, `version = 1\nexec = ["/usr/bin"]\n[fs]\nwrite = ["${dir}"]\n`);
      const refused = await runCli(["run", "--policy", file, "--", "true"]);
      assert.equal(refused.code, 2);
      assert.equal(refused.frames[0]!.code, "E_POLICY_WRITE_ACK");
      const ran = await runCli([
        "run",
        "--policy",
        file,
        "--ack-unsafe-write",
        "--cwd",
        dir,
        "--",
        "sh",
        "-c",
        "echo made > made.txt && pwd",
      ]);
      assert.equal(ran.code, 0, ran.stderr);
      assert.equal(await Deno.readTextFile(`${dir}/made.txt`), "made\n");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

sessionTest(
  "--strict-write needs --ack-unsafe-write and keeps .git and start-up files read-only",
  async () => {
    const dir = await Deno.makeTempDir({ dir: ROOT, prefix: ".specter-strict-write-" });
    try {
      await Deno.mkdir(`${dir}/.git/hooks`, { recursive: true });
      await Deno.writeTextFile(`${dir}/.git/config`, "[core]\n");
      await Deno.writeTextFile(`${dir}/.bashrc`, "# original\n");
      const refused = await runCli([
        "run",
        "--policy",
        "workspace",
        "--strict-write",
        "--cwd",
        dir,
        "--",
        "true",
      ]);
      assert.equal(refused.code, 2);
      assert.equal(refused.frames[0]!.code, "E_UNSAFE_ACK_REQUIRED");
      const script =
        "echo ok > work.txt && echo WORK; echo evil > .git/hooks/pre-commit 2>/dev/null || echo HOOK_RO; " +
        "echo evil >> .git/config 2>/dev/null || echo CONFIG_RO; echo evil >> .bashrc 2>/dev/null || echo RC_RO";
      const ran = await runCli([
        "run",
        "--policy",
        "workspace",
        "--ack-unsafe-write",
        "--strict-write",
        "--cwd",
        dir,
        "--",
        "sh",
        "-c",
        script,
      ]);
      const text = ran.frames.filter((f) => f.type === "stdout").map((f) => f.data).join("");
      assert.match(text, /WORK[\s\S]*HOOK_RO[\s\S]*CONFIG_RO[\s\S]*RC_RO/);
      assert.equal(await Deno.readTextFile(`${dir}/work.txt`), "ok\n");
      assert.equal(await Deno.readTextFile(`${dir}/.git/config`), "[core]\n");
      assert.equal(await Deno.readTextFile(`${dir}/.bashrc`), "# original\n");
      await assert.rejects(Deno.stat(`${dir}/.git/hooks/pre-commit`));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

sessionTest(
  "--sandbox seatbelt on Linux fails with E_SANDBOX_UNAVAILABLE, never runs unsandboxed",
  async () => {
    const { code, frames } = await runCli(["run", "--sandbox", "seatbelt", "--", "true"]);
    assert.equal(code, 125);
    assert.equal(frames[0]!.code, "E_SANDBOX_UNAVAILABLE");
    assert.equal(frames.some((f) => f.type === "start"), false);
  },
);
