import assert from "node:assert/strict";
import { FileError } from "../errors.ts";
import { closeFd, fdInfo, forceComponentWalk, openBeneath, openNoSymlinks } from "./open.ts";
import { readFileBeneath } from "./read.ts";

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof FileError) return error.code;
    throw error;
  }
  return "none";
}

/** A scratch tree: dir/sub/file.txt, dir/link -> /, dir/sub/up -> .., dir/fifo. */
function tree(): string {
  const root = Deno.makeTempDirSync({ prefix: "specter-fsafe-" });
  Deno.mkdirSync(`${root}/dir/sub`, { recursive: true });
  Deno.writeTextFileSync(`${root}/dir/sub/file.txt`, "hello");
  Deno.symlinkSync("/", `${root}/dir/link`);
  Deno.symlinkSync("..", `${root}/dir/sub/up`);
  Deno.symlinkSync("file.txt", `${root}/dir/sub/alias`);
  return root;
}

for (const walk of [false, true]) {
  const how = walk ? "component walk" : "openat2";
  Deno.test(`fsafe (${how}): absolute paths open only when no component is a symlink`, () => {
    forceComponentWalk(walk);
    const root = tree();
    try {
      const fd = openNoSymlinks(`${root}/dir/sub/file.txt`);
      assert.equal(fdInfo(fd).kind, "file");
      closeFd(fd);
      assert.equal(code(() => openNoSymlinks(`${root}/dir/link/etc/passwd`)), "E_PATH_SYMLINK");
      assert.equal(code(() => openNoSymlinks(`${root}/dir/link`)), "E_PATH_SYMLINK");
      assert.equal(code(() => openNoSymlinks(`${root}/dir/sub/alias`)), "E_PATH_SYMLINK");
      assert.equal(code(() => openNoSymlinks(`${root}/dir/nope`)), "E_PATH_NOT_FOUND");
      assert.equal(code(() => openNoSymlinks(`${root}/dir/../dir`)), "E_PATH_ESCAPE");
      assert.equal(code(() => openNoSymlinks("relative/path")), "E_PATH_ESCAPE");
    } finally {
      forceComponentWalk(false);
      Deno.removeSync(root, { recursive: true });
    }
  });

  Deno.test(`fsafe (${how}): paths beneath a directory never leave it`, () => {
    forceComponentWalk(walk);
    const root = tree();
    const dir = openNoSymlinks(`${root}/dir`);
    try {
      assert.equal(new TextDecoder().decode(readFileBeneath(dir, "sub/file.txt", { maxBytes: 10 })), "hello");
      for (
        const escape of ["../dir/sub/file.txt", "/etc/passwd", "sub/../sub/file.txt", "", "sub//file.txt"]
      ) {
        assert.equal(code(() => openBeneath(dir, escape)), "E_PATH_ESCAPE", escape);
      }
      assert.equal(code(() => openBeneath(dir, "link/etc/passwd")), "E_PATH_SYMLINK");
      assert.equal(code(() => openBeneath(dir, "sub/up/sub/file.txt")), "E_PATH_SYMLINK");
      assert.equal(code(() => openBeneath(dir, "sub/alias")), "E_PATH_SYMLINK");
    } finally {
      forceComponentWalk(false);
      closeFd(dir);
      Deno.removeSync(root, { recursive: true });
    }
  });
}

Deno.test("fsafe: two descriptors of one file share an identity; a different file does not", () => {
  const root = tree();
  try {
    const a = openNoSymlinks(`${root}/dir/sub/file.txt`);
    const dir = openNoSymlinks(`${root}/dir`);
    const b = openBeneath(dir, "sub/file.txt", { mode: "read" });
    assert.equal(fdInfo(a).identity, fdInfo(b).identity);
    assert.ok(fdInfo(a).identity !== fdInfo(dir).identity);
    assert.equal(fdInfo(dir).kind, "dir");
    for (const fd of [a, b, dir]) closeFd(fd);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("fsafe: a NUL byte in a path is refused, not truncated", () => {
  assert.throws(() => openNoSymlinks("/etc\0/passwd"), FileError);
});
