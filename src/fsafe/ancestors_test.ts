import assert from "node:assert/strict";
import { ancestorIdentities, fsLocation, locatedWithin, mountTable, reopenFd } from "./ancestors.ts";
import { closeFd, fdInfo, openNoSymlinks } from "./open.ts";

Deno.test("ancestorIdentities: the directory itself, each parent, then / (once)", async () => {
  const root = await Deno.makeTempDir({ prefix: "specter-anc-" });
  await Deno.mkdir(`${root}/a/b`, { recursive: true });
  const fds = [root, `${root}/a`, `${root}/a/b`, "/"].map((p) => openNoSymlinks(p));
  try {
    const [top, a, b, slash] = fds.map((fd) => fdInfo(fd).identity);
    const chain = ancestorIdentities(fds[2]!);
    assert.deepEqual(chain.slice(0, 3), [b, a, top]);
    assert.equal(chain.at(-1), slash);
    assert.equal(new Set(chain).size, chain.length);
    const copy = reopenFd(fds[2]!);
    assert.equal(fdInfo(copy).identity, b);
    closeFd(copy);
  } finally {
    fds.forEach(closeFd);
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("fsLocation / locatedWithin: a directory is within its parent on the same filesystem", async () => {
  const root = await Deno.makeTempDir({ prefix: "specter-anc-" });
  await Deno.mkdir(`${root}/a/b`, { recursive: true });
  const outer = openNoSymlinks(root);
  const inner = openNoSymlinks(`${root}/a/b`);
  try {
    const table = mountTable();
    const o = fsLocation(outer, table);
    const i = fsLocation(inner, table);
    assert.ok(o !== null && i !== null);
    assert.ok(locatedWithin(i, o));
    assert.ok(!locatedWithin(o, i));
    assert.ok(i.path.endsWith("/a/b"), i.path);
    assert.ok(!locatedWithin({ device: "x", path: i.path }, o));
  } finally {
    closeFd(outer);
    closeFd(inner);
    await Deno.remove(root, { recursive: true });
  }
});
