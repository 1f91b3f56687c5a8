/**
 * `session.attach`'s `take` (what `specter attach --take` and a watcher's `t` send): control moves to the
 * client that asks, the one that had it is told with a `session.control` notification and may no longer
 * type, and without `take` a second client only watches, as before.
 */
import assert from "node:assert/strict";
import { DaemonClient } from "../src/daemon/mod.ts";
import { withTempDir, withTimeout } from "./_helpers.ts";
import { cleanUp, create, startDaemon } from "./_daemon.ts";

Deno.test({
  name: "session.attach take: control moves, the old controller is told",
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  await withTempDir(async (dir) => {
    const daemon = await startDaemon(dir);
    try {
      await withTimeout(
        (async () => {
          await create(daemon, "t", ["sh", "-c", 'while read l; do echo "got-$l"; done']);
          const first = await DaemonClient.connect({ socketPath: daemon.socket });
          const second = await DaemonClient.connect({ socketPath: daemon.socket });
          const told: unknown[] = [];
          first.onNotification = (method, params) => {
            if (method === "session.control") told.push(params);
          };
          second.onNotification = (method) => assert.notEqual(method, "session.control");
          const input = (data: string) => ({ name: "t", message: { v: 1, type: "input", data } });
          assert.equal(
            (await first.call("session.attach", { name: "t" }) as { control: boolean }).control,
            true,
          );
          // Without take, a second client watches and may not type.
          assert.equal(
            (await second.call("session.attach", { name: "t" }) as { control: boolean }).control,
            false,
          );
          await assert.rejects(second.call("session.send", input("x\r")), /controlled by another client/);
          await second.call("session.detach", { name: "t" });
          // With take, it controls; the first is told, and is now the one refused.
          const taken = await second.call("session.attach", { name: "t", take: true }) as {
            control: boolean;
          };
          assert.equal(taken.control, true);
          await second.call("session.send", input("y\r"));
          for (let i = 0; i < 100 && told.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
          assert.deepEqual(told, [{ name: "t", control: false }]);
          await assert.rejects(first.call("session.send", input("z\r")), /controlled by another client/);
          first.close();
          second.close();
        })(),
        60_000,
        "take",
      );
    } finally {
      await cleanUp(daemon);
    }
  });
});
