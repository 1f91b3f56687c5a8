/**
 * A daemon session's launch passes every bind of its plan to the keeper in one message. The `agent`
 * preset binds about 50 paths: more than the keeper once took (32), which dropped the daemon and ended every
 * session. Now a launch of up to `MAX_SPAWN_FDS` descriptors starts, and a larger one is refused with
 * `E_FD_PASSING` before anything is sent, ending no other session.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withTempDir, withTimeout } from "./_helpers.ts";
import { cleanUp, create, specter, startDaemon, whereArgs } from "./_daemon.ts";
import { MAX_SPAWN_FDS } from "../src/keeper/mod.ts";

async function policyWith(dir: string, name: string, count: number): Promise<string> {
  const paths: string[] = [];
  for (let i = 0; i < count; i++) {
    const path = join(dir, name, `d${i}`);
    await Deno.mkdir(path, { recursive: true });
    paths.push(path);
  }
  const file = join(dir, `${name}.json`);
  await Deno.writeTextFile(
    file,
    JSON.stringify({ version: 1, exec: ["/usr/bin", "/bin"], fs: { read: paths } }),
  );
  return file;
}

Deno.test({
  name:
    "daemon: a launch with many binds starts; one over the keeper's cap is refused typed, ending no other session",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await withTempDir(async (dir) => {
      const daemon = await startDaemon(dir);
      try {
        await withTimeout(
          (async () => {
            await create(daemon, "victim", ["bash", "--norc", "-i"]);
            const many = await policyWith(dir, "many", 60);
            await create(daemon, "many", ["cat"], ["--policy", many]);
            const huge = await policyWith(dir, "huge", MAX_SPAWN_FDS + 10);
            const refused = await specter([
              "new",
              "huge",
              ...whereArgs(daemon),
              "--no-autostart",
              "--policy",
              huge,
              "--",
              "cat",
            ]);
            assert.notEqual(refused.code, 0);
            assert.match(refused.stderr, /E_FD_PASSING/);
            const list = await specter(["ls", ...whereArgs(daemon), "--no-autostart", "--json"]);
            assert.equal(list.code, 0, list.stderr);
            // One JSON object per session.
            const rows = list.stdout.trim().split("\n").map((line) =>
              JSON.parse(line) as { name: string; running: boolean }
            )
              .map((s) => [s.name, s.running]).sort();
            assert.deepEqual(rows, [["many", true], ["victim", true]]);
          })(),
          60_000,
          "keeper fds",
        );
      } finally {
        await cleanUp(daemon);
      }
    });
  },
});
