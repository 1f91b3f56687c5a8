import assert from "node:assert/strict";
import { closeFd } from "../fsafe/mod.ts";
import { tryLockFile } from "../pty/mod.ts";
import { ATTACH_ROOT, MountAttachments } from "./mount_attachments.ts";
import { rootSandboxUid } from "./root_mapping.ts";

// Root's /run/specter, as root mode uses it (other launches may run beside this test: only its own
// directories are made, and the sandbox uid is the real one).
const ignore = Deno.uid() !== 0 || Deno.build.os !== "linux";

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test({
  name:
    "MountAttachments: a launch's sweep leaves a directory another launch is making, and removes dead ones",
  ignore,
  fn() {
    const uid = rootSandboxUid();
    // Made by the first launch to prepare /run/specter.
    MountAttachments.create(uid, -1).close();
    const tag = crypto.randomUUID().slice(0, 8);
    // Another launch has made its directory and not yet locked it: it must survive the sweep.
    const making = `${ATTACH_ROOT}/mounts-making-${tag}`;
    Deno.mkdirSync(making, { mode: 0o700 });
    // A launch that died before locking, long ago: nothing was attached there; it goes.
    const abandoned = `${ATTACH_ROOT}/mounts-abandoned-${tag}`;
    Deno.mkdirSync(abandoned, { mode: 0o700 });
    Deno.writeFileSync(`${abandoned}/lock.new`, new Uint8Array());
    const longAgo = new Date(Date.now() - 3_600_000);
    Deno.utimeSync(abandoned, longAgo, longAgo);
    // A launch that died holding its lock: the lock is free; it goes.
    const dead = `${ATTACH_ROOT}/mounts-dead-${tag}`;
    Deno.mkdirSync(dead, { mode: 0o700 });
    Deno.mkdirSync(`${dead}/0`);
    Deno.writeFileSync(`${dead}/lock`, new Uint8Array());
    // A live launch: its lock is held; it stays.
    const live = `${ATTACH_ROOT}/mounts-live-${tag}`;
    Deno.mkdirSync(live, { mode: 0o700 });
    const held = tryLockFile(`${live}/lock`);
    assert.notEqual(held, null);
    try {
      const next = MountAttachments.create(uid, -1);
      next.close();
      assert.ok(exists(making), "the directory being made was swept");
      assert.ok(exists(live), "a live launch's directory was swept");
      assert.ok(!exists(abandoned), "an abandoned directory was kept");
      assert.ok(!exists(dead), "a dead launch's directory was kept");
    } finally {
      closeFd(held!);
      for (const dir of [making, live, abandoned, dead]) {
        try {
          Deno.removeSync(dir, { recursive: true }); // This test's own plain directories (no mounts).
        } catch {
          // Already gone.
        }
      }
    }
  },
});
