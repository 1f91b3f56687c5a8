/**
 * Links a sandbox planted for a later run: a program with a write grant leaves a symlink (dangling or
 * not), a FIFO or a linked directory where a later run of the same caller writes its recording, audit
 * log, bundle, golden or command log. The later run must refuse with a typed error and leave the target
 * untouched, never create, truncate, append to or chmod what the link names. Each attack runs as an
 * attacker would run it: the planting is done by a real sandboxed program through the CLI, then the
 * caller's next command runs, with no grant at all over the place.
 */
import assert from "node:assert/strict";
import { CliProcess, runCli, sessionTest, withTimeout } from "../_helpers.ts";
import { withHostDir } from "./_sandbox.ts";

/** Runs `script` in a sandbox that may write `${dir}/ws` (its policy file lies outside the grant). */
async function plant(dir: string, script: string, env: Record<string, string> = {}): Promise<void> {
  await Deno.mkdir(`${dir}/ws`, { recursive: true });
  await Deno.writeTextFile(
    `${dir}/plant.json`,
    JSON.stringify({ version: 1, exec: ["/usr/bin", "/bin"], fs: { write: [`${dir}/ws`] } }),
  );
  const args = [
    "exec",
    "--policy",
    `${dir}/plant.json`,
    "--ack-unsafe-write",
    "--artifacts",
    `${dir}/plant-art`,
  ];
  const { code, stderr } = await runCli([...args, "--", "sh", "-c", `${script} && echo planted`], "", env);
  assert.equal(code, 0, stderr);
}

/** A file of the caller's outside every grant: what a followed link would clobber. */
async function victim(path: string, mode = 0o600): Promise<void> {
  await Deno.writeTextFile(path, "secret\n", { mode });
  await Deno.chmod(path, mode);
}

async function assertUntouched(path: string, mode = 0o600): Promise<void> {
  assert.equal(await Deno.readTextFile(path), "secret\n", `${path} was written through the planted link`);
  assert.equal((await Deno.stat(path)).mode! & 0o777, mode, `${path} changed mode`);
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false; // Absent: what a refused run leaves.
  }
}

/** The caller's next run: `exec` with no grant, recording to `record`. */
function recordRun(dir: string, record: string): Promise<{ code: number; stderr: string }> {
  return runCli([
    "exec",
    "--policy",
    "basic",
    "--artifacts",
    `${dir}/art`,
    "--record",
    record,
    "--",
    "echo",
    "$(id > pwned)",
  ]);
}

sessionTest(
  "--record through a planted symlink (to a file or dangling) is refused; the target is untouched",
  async () => {
    await withHostDir(async (dir) => {
      await victim(`${dir}/victim`);
      await plant(
        dir,
        `ln -s "${dir}/victim" "${dir}/ws/session.cast" && ln -s "${dir}/profile.sh" "${dir}/ws/dangling.cast"`,
      );
      for (const name of ["session.cast", "dangling.cast"]) {
        const { code, stderr } = await recordRun(dir, `${dir}/ws/${name}`);
        assert.equal(code, 125, stderr);
        assert.match(stderr, /E_RECORD: .*symlink/, stderr);
      }
      await assertUntouched(`${dir}/victim`);
      assert.equal(await exists(`${dir}/profile.sh`), false, "the dangling link's target was created");
    });
  },
);

sessionTest(
  "--record beneath a planted directory link is refused; nothing is written where it points",
  async () => {
    await withHostDir(async (dir) => {
      await Deno.mkdir(`${dir}/elsewhere`);
      await plant(dir, `ln -s "${dir}/elsewhere" "${dir}/ws/sub"`);
      const { code, stderr } = await recordRun(dir, `${dir}/ws/sub/x.cast`);
      assert.equal(code, 125, stderr);
      assert.match(stderr, /E_RECORD: .*passes through the symlink/, stderr);
      assert.deepEqual([...Deno.readDirSync(`${dir}/elsewhere`)], []);
    });
  },
);

sessionTest("--record onto a planted FIFO fails at once (E_RECORD) instead of hanging the run", async () => {
  await withHostDir(async (dir) => {
    await plant(dir, `mkfifo "${dir}/ws/session.cast"`);
    const cli = new CliProcess([
      "exec",
      "--policy",
      "basic",
      "--artifacts",
      `${dir}/art`,
      "--record",
      `${dir}/ws/session.cast`,
      "--",
      "true",
    ]);
    await cli.closeStdin();
    try {
      const { code, stderr } = await withTimeout(cli.result(), 15_000, "a run recording onto a FIFO");
      assert.equal(code, 125, stderr);
      assert.match(stderr, /E_RECORD: .*fifo, not a regular file/, stderr);
    } finally {
      try {
        cli.child.kill("SIGKILL");
      } catch {
        // Already ended: the run did not hang.
      }
    }
  });
});

sessionTest(
  "--artifacts with a planted audit.ndjson link or directory link is refused (E_AUDIT)",
  async () => {
    await withHostDir(async (dir) => {
      await victim(`${dir}/victim`);
      await Deno.mkdir(`${dir}/elsewhere`);
      await plant(
        dir,
        `mkdir "${dir}/ws/art" "${dir}/ws/art2" && ln -s "${dir}/target.txt" "${dir}/ws/art/audit.ndjson" && ` +
          `ln -s "${dir}/victim" "${dir}/ws/art2/audit.ndjson" && ln -s "${dir}/elsewhere" "${dir}/ws/art3"`,
      );
      for (const artifacts of [`${dir}/ws/art`, `${dir}/ws/art2`, `${dir}/ws/art3/run`]) {
        const { code, stderr } = await runCli([
          "exec",
          "--policy",
          "basic",
          "--artifacts",
          artifacts,
          "--",
          "echo",
          "hello",
        ]);
        assert.equal(code, 125, stderr);
        assert.match(stderr, /E_AUDIT: .*symlink/, stderr);
      }
      assert.equal(await exists(`${dir}/target.txt`), false, "the dangling link's target was created");
      await assertUntouched(`${dir}/victim`);
      assert.deepEqual([...Deno.readDirSync(`${dir}/elsewhere`)], []);
    });
  },
);

sessionTest(
  "specter test: a bundle whose snapshots/ is a planted link is refused (E_ARTIFACTS)",
  async () => {
    await withHostDir(async (dir) => {
      await Deno.mkdir(`${dir}/elsewhere`);
      await plant(dir, `mkdir "${dir}/ws/out" && ln -s "${dir}/elsewhere" "${dir}/ws/out/snapshots"`);
      await Deno.writeTextFile(
        `${dir}/s.yaml`,
        [
          "version: 1",
          "name: planted",
          "run:",
          "  argv: [sh, -c, 'echo hello; sleep 1']",
          "  policy: basic",
          "steps:",
          '  - wait_for: { text: "hello" }',
          "  - snapshot: first",
        ].join("\n") + "\n",
      );
      const { code, stdout, stderr } = await runCli([
        "test",
        `${dir}/s.yaml`,
        "--artifacts",
        `${dir}/ws/out`,
      ]);
      assert.notEqual(code, 0, stdout + stderr);
      assert.match(stdout + stderr, /E_ARTIFACTS/, stdout + stderr);
      assert.deepEqual([...Deno.readDirSync(`${dir}/elsewhere`)], []);
    });
  },
);

sessionTest(
  "verify --update refuses a golden the program replaced with a symlink (E_PATH_SYMLINK)",
  async () => {
    await withHostDir(async (dir) => {
      await victim(`${dir}/victim`);
      await plant(dir, `ln -s "${dir}/victim" "${dir}/ws/status.txt"`);
      const { code, stderr } = await runCli([
        "verify",
        `${dir}/ws/status.txt`,
        "--update",
        "--policy",
        "basic",
        "--",
        "echo",
        "$(id > pwned)",
      ]);
      assert.equal(code, 2, stderr);
      assert.match(stderr, /E_PATH_SYMLINK/, stderr);
      await assertUntouched(`${dir}/victim`);
    });
  },
);

sessionTest(
  "the command log through a planted log.sqlite link is refused; the target keeps its mode",
  async () => {
    await withHostDir(async (dir) => {
      const env = { XDG_DATA_HOME: `${dir}/ws/share` };
      await victim(`${dir}/victim`, 0o644);
      await plant(
        dir,
        `mkdir -p "${dir}/ws/share/specter" && ln -s "${dir}/victim" "${dir}/ws/share/specter/log.sqlite"`,
      );
      const { code, stderr } = await runCli(["history"], "", env);
      assert.notEqual(code, 0, stderr);
      assert.match(stderr, /E_LOG_WRITE/, stderr);
      await assertUntouched(`${dir}/victim`, 0o644);
    });
  },
);
