/**
 * The audit log of every run: its records, also for runs that fail to start, and no secret in any
 * artifact.
 */
import assert from "node:assert/strict";
import { loadPolicy } from "../src/policy/mod.ts";
import { fingerprintPlan } from "../src/sandbox/fingerprint.ts";
import { prepareLaunch } from "../src/session/spawn_session.ts";
import { runCli, sessionTest, withTempDir } from "./_helpers.ts";

type Record = { [key: string]: unknown; event: string };

async function audit(dir: string): Promise<Record[]> {
  return (await Deno.readTextFile(`${dir}/audit.ndjson`)).trim().split("\n").map((l) => JSON.parse(l));
}

sessionTest("a run's audit log records start, launch (policy, hashes, backend, acks) and end", async () => {
  await withTempDir(async (dir) => {
    const { code, frames } = await runCli([
      "run",
      "--artifacts",
      dir,
      "--policy",
      "basic",
      "--",
      "sh",
      "-c",
      "exit 3",
    ]);
    assert.equal(code, 3);
    const start0 = frames[0] as { artifacts?: string; session: { id: string } };
    assert.equal(start0.artifacts, dir);
    const records = await audit(dir);
    assert.deepEqual(records.map((r) => r.event), ["start", "launch", "end"]);
    const [start, launch, end] = records as [Record, Record, Record];
    assert.deepEqual(start.argv, ["sh", "-c", "exit 3"]);
    assert.deepEqual((start.flag_values as Record).policy, "basic");
    assert.equal(launch.backend, "bwrap");
    assert.match(String(launch.policy_sha256), /^[0-9a-f]{64}$/);
    assert.match(String((launch.fingerprint as Record).argv_sha256), /^[0-9a-f]{64}$/);
    assert.equal((launch.policy as Record).source, "preset:basic");
    assert.equal(end.code, 3);
    assert.ok(records.every((r) => r.run_id === start0.session.id));
  });
});

sessionTest("runs that fail to start are audited too (no sandbox, bad policy)", async () => {
  await withTempDir(async (dir) => {
    const noSandbox = await runCli(["run", "--artifacts", `${dir}/a`, "--", "true"], "", {
      SPECTER_BWRAP: "/nonexistent/bwrap",
    });
    assert.equal(noSandbox.code, 125);
    const a = await audit(`${dir}/a`);
    assert.deepEqual(a.map((r) => r.event), ["start", "error"]);
    assert.equal(a[1]!.code, "E_SANDBOX_UNAVAILABLE");
    const badPolicy = await runCli([
      "exec",
      "--artifacts",
      `${dir}/b`,
      "--policy",
      "workspace",
      "--",
      "true",
    ]);
    assert.equal(badPolicy.code, 2);
    const b = await audit(`${dir}/b`);
    assert.deepEqual(b.map((r) => r.event), ["start", "error"]);
    assert.equal(b[1]!.code, "E_POLICY_WRITE_ACK");
  });
});

sessionTest("without --artifacts the log goes to $XDG_STATE_HOME/specter/runs/<run-id>/", async () => {
  await withTempDir(async (state) => {
    const { stdout } = await runCli(["exec", "--", "true"], "", { XDG_STATE_HOME: state });
    const runId = JSON.parse(stdout).session_id;
    const records = await audit(`${state}/specter/runs/${runId}`);
    assert.deepEqual(records.map((r) => r.event), ["start", "launch", "end"]);
  });
});

sessionTest("breaches are audited (capsule_kill wall)", async () => {
  await withTempDir(async (dir) => {
    await runCli(["run", "--artifacts", dir, "--timeout", "300ms", "--", "sleep", "5"]);
    const records = await audit(dir);
    const breach = records.find((r) => r.event === "breach");
    assert.equal(breach?.reason, "wall");
    assert.equal(records.at(-1)!.timed_out, true);
  });
});

sessionTest("an env secret passed to the program never appears in any artifact", async () => {
  await withTempDir(async (dir) => {
    const policy = `${dir}/policy.json`;
    await Deno.writeTextFile(policy, JSON.stringify({ version: 1, env: ["SPECTER_SECRET"] }));
    const { code } = await runCli(
      [
        "run",
        "--artifacts",
        `${dir}/run`,
        "--policy",
        policy,
        "--env",
        "OTHER_SECRET=hunter3",
        "--record",
        `${dir}/run/session.cast`,
        "--",
        "sh",
        "-c",
        // Proves the values arrived without writing them on the (audited) command line.
        '[ "${#SPECTER_SECRET}" -eq 7 ] && [ "${#OTHER_SECRET}" -eq 7 ] && echo passed-through',
      ],
      "",
      { SPECTER_SECRET: "hunter2" },
    );
    assert.equal(code, 0, "the secrets did reach the program");
    for await (const entry of Deno.readDir(`${dir}/run`)) {
      const text = await Deno.readTextFile(`${dir}/run/${entry.name}`);
      assert.ok(!text.includes("hunter2") && !text.includes("hunter3"), `${entry.name} holds a secret`);
    }
    assert.ok((await Deno.readTextFile(`${dir}/run/session.cast`)).includes("passed-through"));
  });
});

sessionTest(
  "the audit log's hashes equal those of the plan prepareLaunch (and policy render) computes",
  async () => {
    await withTempDir(async (dir) => {
      await runCli(["run", "--artifacts", dir, "--cwd", "/tmp", "--", "/usr/bin/true"]);
      const launch = (await audit(dir)).find((r) => r.event === "launch")!;
      const policy = loadPolicy("strict", {
        workspace: "/tmp",
        home: Deno.env.get("HOME") ?? "/",
        acks: { unsafeWrite: false, network: false },
      });
      const expected = fingerprintPlan(
        prepareLaunch({ argv: ["/usr/bin/true"], cwd: "/tmp", sandbox: { mode: "auto", policy } }).plan,
      );
      assert.deepEqual(launch.fingerprint, expected);
    });
  },
);

sessionTest("specter policy render prints the hashes the audit log records for the same run", async () => {
  await withTempDir(async (dir) => {
    const args = ["--cwd", "/tmp", "--policy", "basic", "--max-procs", "64", "--", "/usr/bin/true"];
    await runCli(["run", "--artifacts", dir, ...args]);
    const launch = (await audit(dir)).find((r) => r.event === "launch")!;
    const render = await runCli([
      "policy",
      "render",
      "basic",
      "--json",
      "--cwd",
      "/tmp",
      "--max-procs",
      "64",
      "--",
      "/usr/bin/true",
    ]);
    assert.equal(render.code, 0, render.stdout);
    assert.deepEqual(JSON.parse(render.stdout).fingerprint, launch.fingerprint);
  });
});
