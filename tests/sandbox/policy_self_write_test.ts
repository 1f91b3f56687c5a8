/**
 * A policy file inside its own write grant could be rewritten by the program it confines, to widen the
 * sandbox of the next run that uses it (callers reuse their command lines, acknowledgements included).
 * Such a launch is refused with `E_POLICY_SELF_WRITABLE` before the program starts, however the file is
 * reached (directly, through a symlinked directory, as the grant itself); a policy file beside its write
 * grants (spec/policy.md's `${workspace}/build` example) still runs. The attack is the reviewer's: the
 * program rewrites the policy to add a write grant, then the caller runs the same command again.
 */
import assert from "node:assert/strict";
import { runCli, sessionTest } from "../_helpers.ts";
import { withHostDir } from "./_sandbox.ts";

function policyText(write: string[]): string {
  return JSON.stringify({ version: 1, exec: ["/usr/bin", "/bin"], fs: { write } });
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false; // Absent: what a refused run leaves.
  }
}

/** `exec` under `policy` with the write acknowledgement, as the caller would run it every time. */
function execWith(policy: string, dir: string, script: string) {
  return runCli([
    "exec",
    "--policy",
    policy,
    "--ack-unsafe-write",
    "--artifacts",
    `${dir}/art-${crypto.randomUUID()}`,
    "--",
    "sh",
    "-c",
    script,
  ]);
}

sessionTest(
  "a policy file inside its own write grant is refused; the program cannot widen its next run",
  async () => {
    await withHostDir(async (dir) => {
      await Deno.mkdir(`${dir}/ws`);
      await Deno.mkdir(`${dir}/secret`);
      const policy = `${dir}/ws/p.json`;
      await Deno.writeTextFile(policy, policyText([`${dir}/ws`]));
      const widened = policyText([`${dir}/ws`, `${dir}/secret`]);
      // Run 1: the program rewrites its own policy. Run 2, the same command line: it writes `secret`.
      const first = await execWith(
        policy,
        dir,
        `printf '%s' '${widened}' > '${policy}'; touch '${dir}/ws/ran'`,
      );
      assert.equal(first.code, 2, first.stderr);
      assert.match(first.stderr, /E_POLICY_SELF_WRITABLE: Field "fs\.write\[0\]"/, first.stderr);
      assert.match(first.stderr, /contains the policy file/, first.stderr);
      const second = await execWith(policy, dir, `touch '${dir}/secret/pwned'`);
      assert.equal(second.code, 2, second.stderr);
      assert.equal(await exists(`${dir}/ws/ran`), false, "the program ran");
      assert.equal(await exists(`${dir}/secret/pwned`), false, "the next run's sandbox was widened");
      assert.equal(await Deno.readTextFile(policy), policyText([`${dir}/ws`]));
    });
  },
);

sessionTest(
  "reached through a symlinked directory, or granted as the file itself, it is refused too",
  async () => {
    await withHostDir(async (dir) => {
      await Deno.mkdir(`${dir}/ws/cfg`, { recursive: true });
      await Deno.symlink(`${dir}/ws/cfg`, `${dir}/cfg`);
      await Deno.writeTextFile(`${dir}/ws/cfg/p.json`, policyText([`${dir}/ws`]));
      const viaLink = await execWith(`${dir}/cfg/p.json`, dir, `touch '${dir}/ws/ran'`);
      assert.equal(viaLink.code, 2, viaLink.stderr);
      assert.match(viaLink.stderr, /E_POLICY_SELF_WRITABLE/, viaLink.stderr);
      await Deno.writeTextFile(`${dir}/self.json`, policyText([`${dir}/self.json`]));
      const itself = await execWith(`${dir}/self.json`, dir, `touch '${dir}/ws/ran'`);
      assert.equal(itself.code, 2, itself.stderr);
      assert.match(itself.stderr, /E_POLICY_SELF_WRITABLE/, itself.stderr);
      assert.equal(await exists(`${dir}/ws/ran`), false, "the program ran");
    });
  },
);

sessionTest("a policy file beside its write grants runs as before", async () => {
  await withHostDir(async (dir) => {
    await Deno.mkdir(`${dir}/build`);
    await Deno.writeTextFile(`${dir}/project.json`, policyText([`${dir}/build`]));
    const { code, stderr } = await execWith(`${dir}/project.json`, dir, `touch '${dir}/build/out'`);
    assert.equal(code, 0, stderr);
    assert.equal(await exists(`${dir}/build/out`), true);
  });
});
