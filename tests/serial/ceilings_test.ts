/**
 * Ceilings that hold against programs trying to leak out of them, under real bwrap sandboxes: detached
 * (setsid, double-forked) children, tmpfs files, fork bombs, CPU burnt by children that exited. Each
 * attack runs with the session's cgroup (root here, as in CI) and, where the fallback can hold it, with
 * cgroups off (`SPECTER_CGROUPS=off`: the pid-namespace sampler). Each test fails if the ceiling leaks:
 * the attack then runs into the wall clock instead of a `capsule_kill`.
 *
 * In tests/serial/: `SPECTER_CGROUPS=off` is set in this process's environment for the fallback's runs, and
 * `deno test --parallel` runs other modules in the same process: their sessions (and the daemons and CLIs
 * they start, which inherit the environment) lost their cgroups meanwhile, failing tests that expect one.
 */
import assert from "node:assert/strict";
import type { Frame } from "../../src/protocol/mod.ts";
import { SPECTER_GROUP } from "../../src/ceilings/mod.ts";
import { Transcript } from "../../src/mod.ts";
import { spawn } from "../../src/session/spawn_session.ts";
import { EXEC_DEFAULT_MAX_OUTPUT } from "../../src/cli/exec.ts";
import { runCli, sessionTest } from "../_helpers.ts";
import { policyOf, preset, PYTHON, runSandboxed as runShared } from "../sandbox/_sandbox.ts";

const MiB = 1024 * 1024;
const CGROUP = Deno.uid() === 0 ? "cgroup-v1" : "pidns-sampler";

async function survivors(marker: string): Promise<string> {
  const out = await new Deno.Command("pgrep", { args: ["-f", marker], stdout: "piped" }).output();
  return new TextDecoder().decode(out.stdout).trim();
}

/**
 * This module's sessions are named with a tag of its own: other test modules run in the same process (one
 * pid, so the same cgroup name prefix; beside this one when it ran in the parallel suite, which failed CI),
 * and their sessions' cgroups are not this module's leftovers.
 */
const TAG = `ceilings${crypto.randomUUID().slice(0, 8)}`;

/** A session id carrying this module's tag (the id ends the session's cgroup name). */
function taggedId(): string {
  return `${TAG}-${crypto.randomUUID()}`;
}

/** {@link runShared} with a tagged session id. */
function runSandboxed(
  argv: string[],
  policy: Parameters<typeof runShared>[1],
  options: Parameters<typeof runShared>[2] = {},
): ReturnType<typeof runShared> {
  return runShared(argv, policy, { id: taggedId(), ...options });
}

/** This module's session cgroups still on the host (every hierarchy Specter uses). */
function leftoverCgroups(): string[] {
  const own = Deno.readTextFileSync("/proc/self/cgroup");
  const left: string[] = [];
  for (const [controller, mount] of [["memory", "memory"], ["pids", "pids"], ["cpuacct", "cpuacct"]]) {
    const path = new RegExp(`^\\d+:(?:[^:]*,)?${controller}(?:,[^:]*)?:(.*)$`, "m").exec(own)?.[1] ?? "/";
    const parent = `/sys/fs/cgroup/${mount}${path === "/" ? "" : path}/${SPECTER_GROUP}`;
    try {
      for (const entry of Deno.readDirSync(parent)) {
        if (entry.isDirectory && entry.name.startsWith(`${Deno.pid}-`) && entry.name.includes(TAG)) {
          left.push(`${parent}/${entry.name}`);
        }
      }
    } catch {
      // No such hierarchy here: nothing can be left in it.
    }
  }
  return left;
}

function capsuleKill(frames: readonly Frame[]) {
  const kill = frames.find((f) => f.type === "capsule_kill");
  return kill?.type === "capsule_kill" ? kill : undefined;
}

/** Runs `fn` once with the session cgroup and once with cgroups off (the pid-namespace sampler). */
function bothMechanisms(name: string, fn: (mechanism: string) => Promise<void>): void {
  sessionTest(`${name} (${CGROUP})`, async () => {
    await fn(CGROUP);
    assert.deepEqual(leftoverCgroups(), [], "the session's cgroups are removed after exit");
  });
  sessionTest(`${name} (pidns-sampler)`, async () => {
    Deno.env.set("SPECTER_CGROUPS", "off");
    try {
      await fn("pidns-sampler");
    } finally {
      Deno.env.delete("SPECTER_CGROUPS");
    }
  });
}

// Each child setsid()s and forks a grandchild that allocates and touches 40 MiB, then the child exits:
// the grandchildren leave the terminal's session and are orphans, while the program itself stays small.
const DETACHED_HOGS = `
import os, sys, time
for i in range(5):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            block = bytearray(40 * 1024 * 1024)
            for j in range(0, len(block), 4096):
                block[j] = 1
            time.sleep(60)
        os._exit(0)
    os.wait()
print("hogs started", flush=True)
time.sleep(60)
`;

bothMechanisms("memory holds against detached (setsid, double-forked) children", async (mechanism) => {
  const marker = `hog${crypto.randomUUID().slice(0, 6)}`;
  const { t } = await runSandboxed(
    [PYTHON, "-c", `${DETACHED_HOGS}# ${marker}`],
    policyOf({ exec: [PYTHON] }),
    { limits: { memoryBytes: 128 * MiB }, timeoutMs: 15_000 },
  );
  const kill = capsuleKill(t.frames);
  assert.equal(kill?.reason, "memory", `5 × 40 MiB detached must breach 128 MiB: ${t.text.slice(-300)}`);
  assert.equal(kill?.enforced_by, mechanism);
  const exit = await t.exit();
  assert.equal(exit.timed_out, false);
  assert.equal(await survivors(marker), "", "no detached child survives the session");
});

sessionTest(`memory holds when /tmp and /dev/shm are filled (tmpfs pages count, ${CGROUP})`, async () => {
  // Each tmpfs is sized to the budget (64 MiB), so 40 MiB fits in each; together they are 80 MiB.
  const { t } = await runSandboxed(
    [
      "/usr/bin/sh",
      "-c",
      "head -c 41943040 /dev/zero > /dev/shm/a && echo shm-full && head -c 41943040 /dev/zero > /tmp/b && " +
      // Then 32 MiB of the program's own memory: the tmpfs pages left no room for it, so the tree stalls at
      // the limit (a breach) even when the second write was refused (ENOMEM) rather than stalled, which a
      // loaded machine can make happen first.
      `echo tmp-full; ${PYTHON} -c 'import time; b = bytearray(32 << 20); time.sleep(30)'`,
    ],
    policyOf({ exec: ["/usr/bin"], budgets: { memory_bytes: 64 * MiB } }),
    { timeoutMs: 15_000 },
  );
  if (CGROUP === "pidns-sampler") {
    // Without a memory cgroup tmpfs pages are nobody's resident memory: only the tmpfs sizes hold.
    return;
  }
  const kill = capsuleKill(t.frames);
  assert.equal(kill?.reason, "memory", `80 MiB of tmpfs files must breach 64 MiB: ${t.text.slice(-300)}`);
  assert.equal(kill?.enforced_by, CGROUP);
  assert.ok(!t.text.includes("tmp-full"), "the second file never completed");
  assert.equal((await t.exit()).timed_out, false);
  assert.deepEqual(leftoverCgroups(), []);
});

sessionTest("a scratch tmpfs holds no more than its size (ENOSPC), also without a cgroup", async () => {
  Deno.env.set("SPECTER_CGROUPS", "off");
  try {
    const { text } = await runSandboxed(
      ["/usr/bin/sh", "-c", "head -c 100000000 /dev/zero > /tmp/big; echo status=$?; wc -c < /tmp/big"],
      policyOf({ exec: ["/usr/bin"], budgets: { memory_bytes: 32 * MiB } }),
      { timeoutMs: 15_000 },
    );
    assert.match(text, /status=1/);
    const written = Number(/^(\d+)\s*$/m.exec(text)?.[1]);
    assert.ok(written <= 32 * MiB, `the file stopped at the tmpfs size, got ${written}`);
  } finally {
    Deno.env.delete("SPECTER_CGROUPS");
  }
});

// A fork bomb whose every child setsid()s, forks a sleeping grandchild and exits: the grandchildren
// pile up outside the terminal's session (the old watcher never saw them).
const DETACHED_BOMB = `
import os, time
while True:
    try:
        if os.fork() == 0:
            os.setsid()
            try:
                if os.fork() == 0:
                    time.sleep(60)
                    os._exit(0)
            finally:
                os._exit(0)
        os.wait()
    except OSError:
        time.sleep(0.005)
`;

bothMechanisms("the process cap holds against a fork bomb of setsid'd children", async (mechanism) => {
  const marker = `bomb${crypto.randomUUID().slice(0, 6)}`;
  const { t } = await runSandboxed(
    [PYTHON, "-c", `${DETACHED_BOMB}# ${marker}`],
    policyOf({ exec: [PYTHON] }),
    { limits: { processes: 24 }, timeoutMs: 15_000 },
  );
  const kill = capsuleKill(t.frames);
  assert.equal(kill?.reason, "processes", t.text.slice(-300));
  assert.equal(kill?.enforced_by, mechanism);
  assert.equal((await t.exit()).timed_out, false);
  assert.equal(await survivors(marker), "");
});

bothMechanisms("CPU time of children that exited counts", async (mechanism) => {
  // Short-lived burners, each far under any per-process limit (RLIMIT_CPU cannot see them add up).
  const { t } = await runSandboxed(
    [
      "/usr/bin/sh",
      "-c",
      "while :; do /usr/bin/sh -c 'i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done'; done",
    ],
    preset("basic"),
    { limits: { cpuSeconds: 2 }, timeoutMs: 12_000 },
  );
  const kill = capsuleKill(t.frames);
  assert.equal(kill?.reason, "cpu", `exited children's CPU must add up to the budget: ${t.text.slice(-200)}`);
  assert.equal(kill?.enforced_by, mechanism);
  assert.equal((await t.exit()).timed_out, false);
});

bothMechanisms("detached CPU burners are counted and killed", async (mechanism) => {
  const marker = `burn${crypto.randomUUID().slice(0, 6)}`;
  const { t } = await runSandboxed(
    [
      "/usr/bin/sh",
      "-c",
      `setsid /usr/bin/sh -c 'while :; do :; done # ${marker}' & ` +
      `setsid /usr/bin/sh -c 'while :; do :; done # ${marker}' & sleep 30`,
    ],
    preset("basic"),
    { limits: { cpuSeconds: 1 }, timeoutMs: 12_000 },
  );
  const kill = capsuleKill(t.frames);
  assert.equal(kill?.reason, "cpu", t.text.slice(-200));
  assert.equal(kill?.enforced_by, mechanism);
  assert.equal((await t.exit()).timed_out, false);
  assert.equal(await survivors(marker), "", "no burner survives");
});

sessionTest("a detached process does not outlive a session that ends normally", async () => {
  const marker = `left${crypto.randomUUID().slice(0, 6)}`;
  const { t } = await runSandboxed(
    ["/usr/bin/sh", "-c", `setsid /usr/bin/sh -c 'sleep 60 # ${marker}' & echo started`],
    preset("basic"),
    { limits: { processes: 16 }, timeoutMs: 12_000 },
  );
  assert.equal((await t.exit()).code, 0);
  assert.equal(await survivors(marker), "");
  assert.deepEqual(leftoverCgroups(), []);
});

sessionTest("concurrent sessions each get their own cgroup, and one's breach leaves the other", async () => {
  if (Deno.uid() !== 0) return; // Without root there is no cgroup to compare.
  const policy = policyOf({ exec: ["/usr/bin", PYTHON] });
  const hog = new Transcript(spawn({
    id: taggedId(),
    argv: [
      PYTHON,
      "-c",
      "import time\nb=[]\nwhile True:\n    b.append(bytearray(8*1024*1024)); time.sleep(0.01)",
    ],
    idleMs: 0,
    timeoutMs: 15_000,
    limits: { memoryBytes: 48 * MiB, processes: 16 },
    sandbox: { mode: "bwrap", policy },
  }));
  const calm = new Transcript(spawn({
    id: taggedId(),
    argv: ["/usr/bin/sh", "-c", "sleep 1.5; echo calm-done"],
    idleMs: 0,
    timeoutMs: 15_000,
    limits: { memoryBytes: 48 * MiB, processes: 16 },
    sandbox: { mode: "bwrap", policy },
  }));
  const groups = [hog, calm].map((t) =>
    Deno.readTextFileSync(`/proc/${t.session.pid}/cgroup`).split("\n").filter((l) =>
      /:(memory|pids):/.test(l)
    )
  );
  for (const lines of groups) {
    assert.equal(lines.length, 2);
    for (const line of lines) assert.match(line, new RegExp(`/${SPECTER_GROUP}/${Deno.pid}-\\d+-`));
  }
  assert.notDeepEqual(groups[0], groups[1], "two sessions, two cgroups");
  const [hogExit, calmExit] = await Promise.all([hog.exit(20_000), calm.exit(20_000)]);
  assert.equal(capsuleKill(hog.frames)?.reason, "memory");
  assert.equal(hogExit.timed_out, false);
  assert.equal(capsuleKill(calm.frames), undefined);
  assert.equal(calmExit.code, 0);
  assert.ok(calm.text.includes("calm-done"));
  assert.deepEqual(leftoverCgroups(), []);
});

sessionTest(
  "the sandbox sees only its own cgroup namespace and no cgroup files to leave through",
  async () => {
    // A plain (uuid) session id: the path the sandbox sees is matched exactly below.
    const { text } = await runShared(
      [
        "/usr/bin/sh",
        "-c",
        "cat /proc/self/cgroup; ls /sys/fs/cgroup 2>&1; echo > /sys/fs/cgroup/pids/cgroup.procs; echo end",
      ],
      preset("basic"),
      { limits: { processes: 16, memoryBytes: 64 * MiB } },
    );
    // bwrap --unshare-all unshares the cgroup namespace when it starts, rooted at Specter's own cgroup;
    // the session's cgroup is joined at the gate, so the sandbox sees itself under specter/<session>,
    // never a path above Specter's cgroup, and has no cgroup filesystem to move itself through.
    const lines = text.split(/\r?\n/).filter((l) => /^\d+:[^:]*:/.test(l));
    assert.ok(lines.length > 0, text);
    for (const line of lines) {
      assert.match(line, /:\/(specter\/\d+-\d+-[0-9a-f-]+)?$/, `no host cgroup path is visible: ${line}`);
    }
    assert.ok(lines.some((line) => /:\/specter\//.test(line)), `inside its session cgroup: ${text}`);
    assert.match(text, /No such file or directory|nonexistent|cannot create/);
    assert.match(text, /end/);
  },
);

sessionTest("exec -- yes ends with a typed overflow at the default output budget, fast", async () => {
  const started = performance.now();
  const { code, stdout } = await runCli(["exec", "--policy", "basic", "--timeout", "60s", "--", "yes"]);
  const result = JSON.parse(stdout.trim().split("\n").at(-1)!) as Record<string, unknown>;
  assert.equal(result.truncated, true, "the default budget cut the output");
  assert.equal(result.timed_out, false);
  assert.equal(result.signal, "KILL");
  assert.notEqual(code, 0);
  const output = String(result.output);
  assert.ok(output.length <= EXEC_DEFAULT_MAX_OUTPUT, `${output.length} bytes kept`);
  assert.ok(performance.now() - started < 30_000, "well before the 60 s timeout");
}, 60_000);

sessionTest("exec --max-output overrides the default budget", async () => {
  const { stdout } = await runCli(["exec", "--policy", "basic", "--max-output", "64k", "--", "yes"]);
  const result = JSON.parse(stdout.trim().split("\n").at(-1)!) as Record<string, unknown>;
  assert.equal(result.truncated, true);
  assert.ok(String(result.output).length <= 64 * 1024);
  assert.ok(String(result.output).length > 32 * 1024);
});

sessionTest("the audit log records which mechanism enforced each ceiling", async () => {
  for (const [env, expected] of [[{}, CGROUP], [{ SPECTER_CGROUPS: "off" }, "pidns-sampler"]] as const) {
    const dir = await Deno.makeTempDir({ prefix: "specter-ceilings-audit-" });
    try {
      const args = [
        "exec",
        "--artifacts",
        dir,
        "--policy",
        "basic",
        "--max-memory",
        "64M",
        "--max-cpu",
        "5s",
      ];
      const { code } = await runCli([...args, "--max-file-size", "1M", "--", "true"], "", env);
      assert.equal(code, 0);
      const records = Deno.readTextFileSync(`${dir}/audit.ndjson`).trim().split("\n").map((l) =>
        JSON.parse(l)
      );
      const launch = records.find((r) => r.event === "launch");
      assert.deepEqual(launch?.enforced_by, {
        memory: expected,
        cpu: expected,
        processes: expected, // The preset's cap.
        file_size: "rlimit",
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
});
