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

Deno.test({
  name:
    "sandbox: after a daemon restart a signal reaches the program (its trap runs) and kill ends it gracefully",
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  await withTempDir(async (dir) => {
    const daemon = await startDaemon(dir);
    try {
      await withTimeout(
        (async () => {
          // A program that reports USR1, and TERM or HUP (kill sends both), by its traps.
          const script = "trap 'echo GOT-USR1' USR1; trap 'echo GOT-TERM; exit 7' TERM HUP; " +
            "echo READY; while :; do sleep 0.1; done";
          await create(daemon, "trap", ["/usr/bin/bash", "-c", script], ["--policy", "basic"]);
          const before = await FrameCollector.connect(daemon);
          await before.client.call("session.attach", { name: "trap", from: 0 });
          await before.until((frames) => frames.some((f) => f.type === "stdout" && f.data.includes("READY")));
          before.client.close();
          daemon.process.kill("SIGKILL");
          await daemon.process.status;
          await restart(daemon);
          const after = await FrameCollector.connect(daemon);
          await after.client.call("session.attach", { name: "trap", from: 0 });
          const where = [...whereArgs(daemon), "--no-autostart"];
          const sent = await specter(["send", "trap", ...where, "--signal", "USR1"]);
          assert.equal(sent.code, 0, sent.stderr);
          const text = () => after.frames.map((f) => f.type === "stdout" ? f.data : "").join("");
          await after.until(() => text().includes("GOT-USR1"));
          assert.equal(after.frames.some((f) => f.type === "exit"), false, "USR1 ended the session");
          const killed = await specter(["kill", "trap", ...where]);
          assert.equal(killed.code, 0, killed.stderr);
          await after.ended;
          // The program's TERM trap ran and its exit code is reported (bwrap's launcher was not the target).
          assert.match(text(), /GOT-TERM/);
          const exit = after.frames.at(-1) as { type: string; code: number | null };
          assert.deepEqual([exit.type, exit.code], ["exit", 7], JSON.stringify(exit));
          after.client.close();
        })(),
        60_000,
        "adopted signals",
      );
    } catch (error) {
      console.error(daemon.log.join("\n"));
      throw error;
    } finally {
      await cleanUp(daemon);
    }
  });
});
