/**
 * The keeper loads only what it needs: its entry (`src/cli/keeper.ts`, where `main.ts` sends `specter
 * keeper`) evaluates no zod and none of the protocol's schemas (they were ~20 MiB of its memory); nor does
 * the network relay's (`src/cli/net_relay.ts`). zod marks
 * the global object when it is evaluated (`__zod_globalConfig`); the control shows that the probe sees it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { KEEPER_V8_FLAGS, LEAN_V8_FLAGS, startDetached } from "../src/cli/self_command.ts";
import { DaemonClient } from "../src/daemon/mod.ts";
import { keeperPid } from "./_daemon.ts";
import { alive, DENO, ROOT, withTempDir } from "./_helpers.ts";

/** The names of the global object's own properties that mention zod, after importing `entry` in a fresh Deno. */
async function zodGlobalsAfter(entry: string): Promise<string[]> {
  const script = `await import(${JSON.stringify(pathToFileURL(`${ROOT}/${entry}`).href)});\n` +
    "console.log(JSON.stringify(Object.getOwnPropertyNames(globalThis).filter((n) => /zod/i.test(n))));";
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", script],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 0, stderr);
  return JSON.parse(new TextDecoder().decode(output.stdout).trim());
}

Deno.test("the keeper's and the network relay's entries evaluate no zod (the daemon's does: the probe works)", async () => {
  assert.deepEqual(await zodGlobalsAfter("src/cli/keeper.ts"), []);
  assert.deepEqual(await zodGlobalsAfter("src/cli/net_relay.ts"), []);
  assert.ok((await zodGlobalsAfter("src/daemon/mod.ts")).length > 0, "the probe no longer sees zod");
});

/** A process's command line and its `DENO_V8_FLAGS`. */
function processOf(pid: number): { argv: string[]; v8Flags: string | undefined } {
  const argv = Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0").filter((arg) => arg !== "");
  const environ = Deno.readTextFileSync(`/proc/${pid}/environ`).split("\0");
  const v8Flags = environ.find((entry) => entry.startsWith("DENO_V8_FLAGS="))?.slice("DENO_V8_FLAGS=".length);
  return { argv, v8Flags };
}

Deno.test("an autostarted daemon and its keeper run from their own modules, the keeper in V8's lite mode", async () => {
  await withTempDir(async (dir) => {
    Deno.chmodSync(dir, 0o700);
    const daemon = { dir, socket: join(dir, "run", "d.sock"), stateDir: join(dir, "state") };
    const where = ["--socket", daemon.socket, "--state-dir", daemon.stateDir];
    let daemonPid = 0;
    try {
      const client = await DaemonClient.connect({
        socketPath: daemon.socket,
        // What a client command does without --no-autostart (`daemon_client.ts`).
        start: () => startDetached("daemon", where),
      });
      try {
        daemonPid = (await client.call("daemon.status") as { pid: number }).pid;
        const started = processOf(daemonPid);
        assert.deepEqual(started.argv, [
          DENO,
          "run",
          "-A",
          join(ROOT, "src/cli/daemon.ts"),
          "daemon",
          ...where,
        ]);
        assert.equal(started.v8Flags, LEAN_V8_FLAGS);
        await client.call("session.create", { name: "c", argv: ["cat"], cwd: dir, flags: {} });
        const keeper = keeperPid(daemon);
        assert.ok(keeper !== null, "the daemon started its keeper");
        const kept = processOf(keeper);
        const entry = join(ROOT, "src/cli/keeper.ts");
        assert.deepEqual(kept.argv, [DENO, "run", "-A", entry, "keeper", "--state-dir", daemon.stateDir]);
        assert.equal(kept.v8Flags, KEEPER_V8_FLAGS);
        await client.call("daemon.stop", { kill_sessions: true });
      } finally {
        client.close();
      }
      // Both end: the daemon when stopped, the keeper once it holds nothing and no daemon is connected.
      for (let i = 0; i < 400 && (alive(daemonPid) || keeperPid(daemon) !== null); i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      assert.ok(!alive(daemonPid), "the daemon ended");
      assert.equal(keeperPid(daemon), null, "the keeper ended");
    } finally {
      // A failing run leaves nothing behind either.
      for (const pid of [daemonPid, keeperPid(daemon) ?? 0]) {
        if (pid > 0 && alive(pid)) Deno.kill(pid, "SIGKILL");
      }
    }
  });
});
