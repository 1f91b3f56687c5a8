import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type DirIdentity,
  dirIdentity,
  KEEPER_IDLE_ENV,
  KEEPER_IDLE_GRACE_MS,
  keeperIdleGrace,
  OrphanWatch,
} from "./orphan_watch.ts";

/** A watch on a fake clock and a fake directory. */
function fake(graceMs = 1000) {
  const world = { now: 0, dir: { dev: 1, ino: 7 } as DirIdentity | null };
  const watch = new OrphanWatch("/state", {
    graceMs,
    now: () => world.now,
    identity: () => world.dir,
  });
  return { world, watch };
}

Deno.test("OrphanWatch: no session and no daemon for the grace ends the keeper; not a moment before", () => {
  const { world, watch } = fake(1000);
  assert.equal(watch.check(false, 0), null);
  world.now = 999;
  assert.equal(watch.check(false, 0), null);
  world.now = 1000;
  assert.equal(watch.check(false, 0), "idle");
});

Deno.test("OrphanWatch: a kept session, even long after its daemon went, never makes the keeper idle", () => {
  const { world, watch } = fake(1000);
  world.now = 10 * 60_000;
  assert.equal(watch.check(false, 1), null);
  assert.equal(watch.check(false, 400), null);
});

Deno.test("OrphanWatch: a connected daemon is never left; the idle time counts from the last daemon", () => {
  const { world, watch } = fake(1000);
  world.now = 5000;
  assert.equal(watch.check(true, 0), null);
  watch.daemonSeen(); // It went now.
  world.now = 5500;
  assert.equal(watch.check(false, 0), null);
  world.now = 6000;
  assert.equal(watch.check(false, 0), "idle");
  world.dir = null;
  assert.equal(watch.check(true, 3), null, "a connected daemon is left to deal with its directory");
});

Deno.test("OrphanWatch: a state directory removed or replaced ends the keeper at once, sessions or not", () => {
  for (const replaced of [null, { dev: 1, ino: 8 }, { dev: 2, ino: 7 }]) {
    const { world, watch } = fake(60_000);
    assert.equal(watch.check(false, 5), null);
    world.dir = replaced;
    assert.equal(watch.check(false, 5), "state-gone");
  }
});

Deno.test("OrphanWatch: a directory that cannot be looked at is never taken for gone", () => {
  let fail = false;
  const watch = new OrphanWatch("/state", {
    graceMs: 1000,
    now: () => 0,
    identity: () => {
      if (fail) throw new Deno.errors.PermissionDenied("no");
      return { dev: 1, ino: 1 };
    },
  });
  fail = true;
  assert.equal(watch.check(false, 1), null);
  const unknown = new OrphanWatch("/state", {
    graceMs: 1000,
    now: () => 0,
    identity: () => {
      throw new Deno.errors.PermissionDenied("no");
    },
  });
  assert.equal(unknown.check(false, 1), null);
});

Deno.test("dirIdentity: a real directory, gone, replaced by another, or a file in its place", () => {
  const root = Deno.makeTempDirSync({ prefix: "specter-orphan-" });
  try {
    const dir = join(root, "state");
    Deno.mkdirSync(dir);
    const first = dirIdentity(dir);
    assert.notEqual(first, null);
    const watch = new OrphanWatch(dir, { graceMs: 60_000 });
    assert.equal(watch.check(false, 1), null);
    // Another directory made in its place is not the one the keeper's socket and lock were in.
    Deno.mkdirSync(join(root, "other"));
    Deno.removeSync(dir);
    Deno.renameSync(join(root, "other"), dir);
    assert.notDeepEqual(dirIdentity(dir), first);
    assert.equal(watch.check(false, 1), "state-gone");
    Deno.removeSync(dir);
    assert.equal(dirIdentity(dir), null);
    Deno.writeTextFileSync(dir, "");
    assert.equal(dirIdentity(dir), null);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("keeperIdleGrace: the environment's whole milliseconds, else the documented 30 s", () => {
  assert.equal(KEEPER_IDLE_GRACE_MS, 30_000);
  const env = (value: string | undefined) => (name: string) => name === KEEPER_IDLE_ENV ? value : undefined;
  assert.equal(keeperIdleGrace(env(undefined)), 30_000);
  assert.equal(keeperIdleGrace(env("1500")), 1500);
  assert.equal(keeperIdleGrace(env("0")), 0);
  for (const bad of ["", "-5", "1.5", "ten", "1e3", "9999999999"]) {
    assert.equal(keeperIdleGrace(env(bad)), 30_000);
  }
});
