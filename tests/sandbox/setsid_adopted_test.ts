/**
 * A sandboxed session taken back by a restarted daemon reports a ctrl-c death as the daemon that launched
 * it does: killed by SIGINT, not as bwrap's exit code 130 (the new daemon holds no handle on the sandbox's
 * init, but its launcher is still bwrap, whose report of a death by N is 128 + N).
 */
import assert from "node:assert/strict";
import { withTempDir, withTimeout } from "../_helpers.ts";
import { cleanUp, create, FrameCollector, restart, specter, startDaemon, whereArgs } from "../_daemon.ts";

Deno.test({
  name: "sandbox: after a daemon restart a program killed by a typed ctrl-c still reads as SIGINT",
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  await withTempDir(async (dir) => {
    const daemon = await startDaemon(dir);
    try {
      await withTimeout(
        (async () => {
          await create(daemon, "cat", ["/usr/bin/cat"], ["--policy", "basic"]);
          const before = await FrameCollector.connect(daemon);
          await before.client.call("session.attach", { name: "cat", from: 0 });
          await before.until((frames) => frames.some((f) => f.type === "start"));
          before.client.close();
          daemon.process.kill("SIGKILL");
          await daemon.process.status;
          await restart(daemon);
          const after = await FrameCollector.connect(daemon);
          await after.client.call("session.attach", { name: "cat", from: 0 });
          const sent = await specter([
            "send",
            "cat",
            ...whereArgs(daemon),
            "--no-autostart",
            "--key",
            "ctrl-c",
          ]);
          assert.equal(sent.code, 0, sent.stderr);
          await after.ended;
          const exit = after.frames.at(-1) as { type: string; code: number | null; signal: string | null };
          assert.equal(exit.type, "exit");
          assert.deepEqual([exit.code, exit.signal], [null, "INT"], JSON.stringify(exit));
          after.client.close();
        })(),
        60_000,
        "adopted ctrl-c",
      );
    } catch (error) {
      console.error(daemon.log.join("\n"));
      throw error;
    } finally {
      await cleanUp(daemon);
    }
  });
});
