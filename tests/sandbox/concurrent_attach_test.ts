/**
 * Root mode's mount attachments under concurrent launches: each launch attaches its grants beneath
 * `/run/specter` and detaches them once its bwrap bound them, while other launches' bwrap bind `/`
 * recursively. A detach that reached another launch's copy in the middle of its bind failed that launch
 * (`E_SANDBOX_UNAVAILABLE: … remount "/newroot/run/specter/mounts-…": No such file or directory`, seen in a
 * clean-clone run). Many launches at once, several rounds: every one must start and exit 0.
 */
import assert from "node:assert/strict";
import { sessionTest, withTempDir } from "../_helpers.ts";
import { policyOf, runSandboxed } from "./_sandbox.ts";

const ROOT_ONLY = Deno.uid() === 0;
const AT_ONCE = 8;
const ROUNDS = 10;

if (!ROOT_ONLY) {
  Deno.test({ name: "root mode: concurrent launches with grants all start", ignore: true, fn: () => {} });
} else {
  sessionTest(
    "root mode: concurrent launches with grants all start (each attaches and detaches)",
    async () => {
      await withTempDir(async (dir) => {
        const failures: string[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          const runs = Array.from({ length: AT_ONCE }, async (_, i) => {
            const grant = `${dir}/r${round}-${i}`;
            await Deno.mkdir(grant);
            const { code, text, t } = await runSandboxed(
              ["/usr/bin/sh", "-c", `echo ok > ${grant}/out`],
              policyOf({ exec: ["/usr/bin"], fs: { read: [], write: [grant] } }),
            );
            const errors = t.frames.filter((f) => f.type === "error");
            if (code !== 0 || errors.length > 0) {
              failures.push(
                `round ${round} #${i}: exit ${code}: ${JSON.stringify(errors)} ${text.slice(-200)}`,
              );
            } else if ((await Deno.readTextFile(`${grant}/out`)) !== "ok\n") {
              failures.push(`round ${round} #${i}: the grant was not written`);
            }
          });
          await Promise.all(runs);
        }
        assert.deepEqual(failures, [], failures.join("\n"));
      });
    },
    180_000,
  );
}
