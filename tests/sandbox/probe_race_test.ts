/**
 * The bwrap probe never binds `/`: root mode attaches and detaches mounts under `/run/specter` all the time
 * (one set per launch), and a probe whose bind of `/` copied one that another launch detached meanwhile
 * failed with `E_SANDBOX_UNAVAILABLE` (CI, agents starting at once). Here a loop mounts and unmounts under
 * `/run/specter` while the probe runs again and again.
 */
import assert from "node:assert/strict";
import { ATTACH_ROOT, probeBwrap } from "../../src/sandbox/mod.ts";

Deno.test({
  name: "probe: bwrap's probe holds while mounts come and go under /run/specter",
  ignore: Deno.uid() !== 0,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = `${ATTACH_ROOT}/mounts-probe-race-${Deno.pid}`;
    const source = Deno.makeTempDirSync({ prefix: "specter-probe-race-" });
    Deno.mkdirSync(dir);
    // A directory without a `lock` is left alone by launches' sweeps for a minute (a launch being made).
    const churn = new Deno.Command("sh", {
      // As launches do: a point made and attached, then detached and removed (removing it detaches the
      // copies other namespaces hold of it, whatever their propagation).
      args: [
        "-c",
        `cd '${dir}'; while :; do
        for i in 0 1 2 3 4 5 6 7; do mkdir $i; mount --bind '${source}' $i; done
        for i in 0 1 2 3 4 5 6 7; do umount -l $i; rmdir $i; done
      done`,
      ],
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      const failures: string[] = [];
      for (let i = 0; i < 300; i++) {
        const probe = probeBwrap();
        if (!probe.ok) failures.push(probe.reason);
      }
      assert.deepEqual(failures, []);
    } finally {
      churn.kill("SIGKILL");
      await churn.status;
      for (let i = 0; i < 8; i++) await new Deno.Command("umount", { args: ["-l", `${dir}/${i}`] }).output();
      Deno.removeSync(dir, { recursive: true });
      Deno.removeSync(source, { recursive: true });
    }
  },
});
