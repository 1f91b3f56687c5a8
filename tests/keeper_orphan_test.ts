/**
 * Orphaned keepers end, against real processes: a keeper nobody started a daemon for ends after its idle
 * grace, one whose state directory is removed ends at once (taking its programs with it), and one that
 * holds a session outlives its daemon's `kill -9` well past the grace, for the next daemon to take back.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DaemonClient } from "../src/daemon/mod.ts";
import { KEEPER_IDLE_ENV } from "../src/keeper/mod.ts";
import { alive, DENO, ROOT, withTempDir, withTimeout } from "./_helpers.ts";
import {
  cleanUp,
  create,
  FrameCollector,
  keeperPid,
  restart,
  startDaemon,
  type TestDaemon,
} from "./_daemon.ts";

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves once `test` holds (rejects after `ms`, saying `what`). */
async function until(test: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`Never happened within ${ms} ms: ${what}`);
    await sleep(50);
  }
}

/** `specter keeper --state-dir DIR` with `env`, as a daemon starts it (but its stderr kept). */
function startKeeper(stateDir: string, env: Record<string, string>): Deno.ChildProcess {
  return new Deno.Command(DENO, {
    args: ["run", "-A", join(ROOT, "main.ts"), "keeper", "--state-dir", stateDir],
    env,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
}

/** Whether a socket file is at `path` (the keeper listens once it is). */
function listening(path: string): boolean {
  try {
    return Deno.lstatSync(path).isSocket === true;
  } catch {
    return false;
  }
}

/** A process's exit, or null when it has not exited within `ms`. */
async function exitWithin(child: Deno.ChildProcess, ms: number): Promise<Deno.CommandStatus | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), ms));
  try {
    return await Promise.race([child.status, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The pid the keeper's log says session `name`'s program was spawned as. */
function spawnedPid(stateDir: string, name: string): number {
  const log = Deno.readTextFileSync(join(stateDir, "keeper.log"));
  const match = new RegExp(`session "${name}" spawned: pid (\\d+)`).exec(log);
  assert.ok(match !== null, `the keeper's log names the program of "${name}": ${log}`);
  return Number(match[1]);
}

Deno.test({
  name:
    "keeper: with no daemon and no session it ends after its idle grace; removing its state directory ends it at once",
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  await withTempDir(async (dir) => {
    const idleDir = join(dir, "idle");
    const goneDir = join(dir, "gone");
    const idle = startKeeper(idleDir, { [KEEPER_IDLE_ENV]: "1500" });
    // A grace far longer than this test: only its directory going can end it.
    const gone = startKeeper(goneDir, { [KEEPER_IDLE_ENV]: "600000" });
    try {
      await until(() => listening(join(idleDir, "keeper.sock")), "the first keeper listens");
      const listened = Date.now();
      await until(() => listening(join(goneDir, "keeper.sock")), "the second keeper listens");
      const status = await exitWithin(idle, 20_000);
      assert.ok(status !== null, "the idle keeper ended");
      assert.equal(status.code, 0);
      // Not at once: it waited for a daemon (the margin is loose, the machine is shared).
      assert.ok(Date.now() - listened >= 1000, `it ended after ${Date.now() - listened} ms`);
      const log = Deno.readTextFileSync(join(idleDir, "keeper.log"));
      assert.match(log, /keeper done: no session and no daemon for the idle grace/);
      assert.equal(listening(join(idleDir, "keeper.sock")), false, "its socket was removed");

      assert.equal(await exitWithin(gone, 500), null, "a keeper with a long grace is still there");
      Deno.removeSync(goneDir, { recursive: true });
      const goneStatus = await exitWithin(gone, 20_000);
      assert.ok(goneStatus !== null, "the keeper whose state directory was removed ended");
      assert.equal(goneStatus.code, 0);
    } finally {
      for (const child of [idle, gone]) {
        try {
          child.kill("SIGKILL");
        } catch {
          // Ended already (what the test expects).
        }
        await child.status;
      }
    }
  });
});

Deno.test({
  name:
    "keeper: holding a session it outlives its daemon's kill -9 past the idle grace, for the next daemon; once its state directory is removed it ends and its program with it",
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  // The daemon's environment reaches the keeper it starts (as SPECTER_CGROUPS and DENO_V8_FLAGS do).
  await withTempDir(async (dir) => {
    let daemon: TestDaemon | null = null;
    try {
      daemon = await startDaemon(dir, [], [], { [KEEPER_IDLE_ENV]: "1000" });
      const started: TestDaemon = daemon;
      await create(started, "held", ["cat"]);
      const keeper = keeperPid(started);
      assert.ok(keeper !== null, "the daemon started a keeper");
      const program = spawnedPid(started.stateDir, "held");
      assert.ok(alive(program));

      started.process.kill("SIGKILL");
      await started.process.status;
      // Three idle graces and more: a keeper that holds a session is not idle.
      await sleep(4000);
      assert.equal(keeperPid(started), keeper, "the keeper outlived its daemon");
      assert.ok(alive(keeper), "the keeper is running");
      assert.ok(alive(program), "the session's program is running");

      // The next daemon takes the session back from the same keeper: typing reaches the same `cat`.
      await restart(started);
      assert.equal(keeperPid(started), keeper);
      const watcher = await FrameCollector.connect(started);
      await watcher.client.call("session.attach", { name: "held", from: 0 });
      await watcher.client.call("session.send", {
        name: "held",
        message: { v: 1, type: "input", data: "still here\r" },
      });
      await watcher.until(() => watcher.text().includes("still here"));
      watcher.client.close();

      started.process.kill("SIGKILL");
      await started.process.status;
      await sleep(1500);
      assert.ok(alive(keeper), "still held: the keeper goes on");
      Deno.removeSync(started.stateDir, { recursive: true });
      await until(() => !alive(keeper), "the keeper ends once its state directory is gone");
      await until(() => !alive(program), "the session's program ends with it");
      assert.equal(keeperPid(started), null, "no keeper is left for the state directory");
      // The socket the daemon listened on is not answered by anyone.
      await assert.rejects(DaemonClient.connect({ socketPath: started.socket }));
    } finally {
      if (daemon !== null) await withTimeout(cleanUp(daemon), 20_000, "clean-up");
    }
  });
});
