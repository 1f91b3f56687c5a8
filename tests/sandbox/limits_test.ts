/**
 * Resource ceilings against real processes under bwrap: a breach emits capsule_kill with its reason,
 * kills the whole tree, then exit.
 */
import assert from "node:assert/strict";
import { kernelEnforces } from "../../src/ceilings/mod.ts";
import { prepareLaunch } from "../../src/session/spawn_session.ts";
import { sessionTest } from "../_helpers.ts";
import { policyOf, preset, PYTHON, runSandboxed } from "./_sandbox.ts";

async function survivors(marker: string): Promise<string> {
  const out = await new Deno.Command("pgrep", { args: ["-f", marker], stdout: "piped" }).output();
  return new TextDecoder().decode(out.stdout).trim();
}

sessionTest("a fork bomb is stopped by the process budget", async () => {
  const marker = `bomb${crypto.randomUUID().slice(0, 6)}`;
  const { t } = await runSandboxed(
    // Every process keeps forking: without a ceiling this grows until the machine is exhausted.
    ["/usr/bin/sh", "-c", `${marker}() { while :; do ${marker} & sleep 0.01; done; }; ${marker}`],
    preset("basic"),
    { limits: { processes: 48 }, timeoutMs: 15_000 },
  );
  const exit = await t.exit();
  assert.equal(exit.timed_out, false, "the bomb ended well before the wall clock");
  // Either the supervisor saw the tree at the budget (capsule_kill), or the rlimit backstop made every
  // fork fail and the bomb collapsed on its own; both are the budget stopping it.
  const killed = t.frames.some((f) => f.type === "capsule_kill" && f.reason === "processes");
  assert.ok(killed || t.text.includes("Cannot fork"), t.text.slice(-300));
  assert.equal(await survivors(marker), "");
});

sessionTest("a sustained process budget breach is killed with capsule_kill (processes)", async () => {
  const { t } = await runSandboxed(
    // 24 long-lived processes: over the budget of 20 but under the rlimit backstop (28), so nothing
    // fails in the program and only the supervisor's watcher can catch the breach.
    ["/usr/bin/sh", "-c", "i=0; while [ $i -lt 24 ]; do sleep 30 & i=$((i+1)); done; wait"],
    preset("basic"),
    { limits: { processes: 20 }, timeoutMs: 15_000 },
  );
  const kill = t.frames.find((f) => f.type === "capsule_kill");
  assert.equal(kill?.type === "capsule_kill" && kill.reason, "processes", JSON.stringify(t.frames.slice(-3)));
  assert.ok((kill?.type === "capsule_kill" ? kill.value ?? 0 : 0) >= 20);
  const exit = await t.exit();
  assert.equal(exit.timed_out, false);
  assert.ok(t.frames.indexOf(kill!) < t.frames.indexOf(exit), "capsule_kill comes before exit");
});

sessionTest("a memory hog is killed with capsule_kill (memory)", async () => {
  const hog =
    "import time\nblocks = []\nwhile True:\n    blocks.append(bytearray(16 * 1024 * 1024))\n    time.sleep(0.02)\n";
  const { t } = await runSandboxed([PYTHON, "-c", hog], policyOf({ exec: [PYTHON] }), {
    limits: { memoryBytes: 96 * 1024 * 1024 },
  });
  const kill = t.frames.find((f) => f.type === "capsule_kill");
  assert.ok(kill?.type === "capsule_kill" && kill.reason === "memory", JSON.stringify(t.frames.slice(-3)));
  // Where the session has a memory cgroup the kernel stops the tree at the limit (the peak is the limit).
  assert.ok((kill.value ?? 0) >= 96 * 1024 * 1024, JSON.stringify(kill));
  assert.equal((await t.exit()).signal, "KILL");
});

sessionTest("a CPU spin is killed with capsule_kill (cpu)", async () => {
  const marker = `spin-${crypto.randomUUID().slice(0, 8)}`;
  const { t } = await runSandboxed(
    ["/usr/bin/sh", "-c", `while :; do :; done # ${marker}`],
    preset("strict"),
    { limits: { cpuSeconds: 1 }, timeoutMs: 15_000 },
  );
  const kill = t.frames.find((f) => f.type === "capsule_kill");
  assert.equal(kill?.type === "capsule_kill" && kill.reason, "cpu", JSON.stringify(t.frames.slice(-3)));
  assert.equal((await t.exit()).timed_out, false);
  assert.equal(await survivors(marker), "");
});

sessionTest("a wall-clock breach gives capsule_kill (wall) and timed_out", async () => {
  const { t } = await runSandboxed(
    ["/usr/bin/sleep", "30"],
    policyOf({ exec: ["/usr/bin"], budgets: { wall_ms: 300 } }),
  );
  const kill = t.frames.find((f) => f.type === "capsule_kill");
  assert.deepEqual(kill?.type === "capsule_kill" && [kill.reason, kill.limit], ["wall", 300]);
  assert.equal((await t.exit()).timed_out, true);
});

sessionTest("rlimits are in place before the program's first instruction (prlimit launcher)", async () => {
  const { text } = await runSandboxed(
    [
      "/usr/bin/sh",
      "-c",
      "read -r _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ < /proc/self/stat; " +
      "while read -r line; do case \"$line\" in 'Max processes'*|'Max cpu time'*|'Max file size'*) echo \"$line\";; esac; done < /proc/self/limits",
    ],
    preset("strict"),
    { limits: { processes: 40, cpuSeconds: 7, fileSizeBytes: 1_000_000 } },
  );
  // CPU and process rlimits are backstops just above the budgets, which the supervisor enforces itself;
  // with a pids cgroup the kernel caps the whole tree and RLIMIT_NPROC (per host uid) is not set.
  assert.match(text, /Max cpu time\s+8\s+8\s+seconds/);
  assert.match(text, /Max file size\s+1000000\s+1000000\s+bytes/);
  if (kernelEnforces("processes")) assert.doesNotMatch(text, /Max processes\s+50\s+50\s+processes/);
  else assert.match(text, /Max processes\s+50\s+50\s+processes/);
});

sessionTest("ceilings only tighten a policy's budgets", () => {
  const policy = policyOf({ budgets: { processes: 50, cpu_seconds: 9 } });
  const tighter = prepareLaunch({
    argv: ["/usr/bin/true"],
    sandbox: { mode: "bwrap", policy },
    limits: { processes: 10 },
  });
  const looser = prepareLaunch({
    argv: ["/usr/bin/true"],
    sandbox: { mode: "bwrap", policy },
    limits: { processes: 500, cpuSeconds: 60 },
  });
  assert.deepEqual([tighter.options.limits.processes, tighter.options.limits.cpuSeconds], [10, 9]);
  assert.deepEqual([looser.options.limits.processes, looser.options.limits.cpuSeconds], [50, 9]);
  const nproc = !kernelEnforces("processes");
  assert.equal(tighter.plan.argv.includes("--nproc=18") && looser.plan.argv.includes("--nproc=63"), nproc);
  assert.ok(tighter.plan.argv.includes("--cpu=10") && looser.plan.argv.includes("--cpu=10"));
  return Promise.resolve();
});
