import assert from "node:assert/strict";
import { FileError } from "../errors.ts";
import { closeFd, fdInfo } from "./open.ts";
import { openTrusted } from "./trusted.ts";
import { makeDirsBeneath, openFileBeneath, openWriteDir, writerTrust } from "./write_beneath.ts";

function code(fn: () => unknown): string {
  try {
    const fd = fn();
    if (typeof fd === "number") closeFd(fd);
  } catch (error) {
    if (error instanceof FileError) return error.code;
    throw error;
  }
  return "none";
}

function withRoot(fn: (root: string) => void): void {
  const root = Deno.makeTempDirSync({ prefix: "specter-write-beneath-" });
  try {
    fn(root);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false; // Absent.
  }
}

Deno.test("openWriteDir: makes missing directories one by one (0700), never through a planted link", () => {
  withRoot((root) => {
    const fd = openWriteDir(`${root}/a/b/c`, { create: true });
    assert.equal(fdInfo(fd).kind, "dir");
    closeFd(fd);
    assert.equal(Deno.statSync(`${root}/a/b`).mode! & 0o777, 0o700);
    // A link anywhere on the way, dangling or not, is refused and nothing is made where it points.
    Deno.mkdirSync(`${root}/elsewhere`);
    Deno.symlinkSync(`${root}/elsewhere`, `${root}/a/link`);
    Deno.symlinkSync(`${root}/nowhere`, `${root}/a/dangling`);
    assert.equal(code(() => openWriteDir(`${root}/a/link/x`, { create: true })), "E_PATH_SYMLINK");
    assert.equal(code(() => openWriteDir(`${root}/a/dangling/x`, { create: true })), "E_PATH_SYMLINK");
    assert.equal(code(() => openWriteDir(`${root}/a/link`)), "E_PATH_SYMLINK");
    assert.deepEqual([...Deno.readDirSync(`${root}/elsewhere`)], []);
    assert.equal(exists(`${root}/nowhere`), false);
    // A file in the way, or a missing directory without `create`.
    Deno.writeTextFileSync(`${root}/a/file`, "x");
    assert.equal(code(() => openWriteDir(`${root}/a/file/x`, { create: true })), "E_FILE_TYPE");
    assert.equal(code(() => openWriteDir(`${root}/a/missing`)), "E_PATH_NOT_FOUND");
    const rootFd = openWriteDir(root);
    assert.equal(code(() => makeDirsBeneath(rootFd, "a/../b")), "E_PATH_ESCAPE");
    closeFd(rootFd);
  });
});

Deno.test("writerTrust: links at the home directory or above it are followed, none beneath it", () => {
  withRoot((root) => {
    Deno.mkdirSync(`${root}/real/home/.local`, { recursive: true });
    Deno.symlinkSync(`${root}/real/home`, `${root}/home`);
    Deno.symlinkSync(`${root}/real/home/.local`, `${root}/real/home/state`);
    const trust = writerTrust(`${root}/home`);
    const opened = openTrusted(`${root}/home/.local`, trust);
    assert.equal(opened.path, `${root}/real/home/.local`);
    closeFd(opened.fd);
    assert.equal(code(() => openTrusted(`${root}/home/state`, trust).fd), "E_PATH_SYMLINK");
    assert.equal(
      code(() => openTrusted(`${root}/home/.local`, writerTrust(`${root}/other`)).fd),
      "E_PATH_SYMLINK",
    );
  });
});

Deno.test("openFileBeneath: truncates or appends a regular file, creates a missing one, refuses the rest", () => {
  withRoot((root) => {
    const dir = openWriteDir(root);
    try {
      Deno.writeTextFileSync(`${root}/log`, "one\n");
      const appended = openFileBeneath(dir, "log", { how: "append", mode: 0o600 });
      appended.file.writeSync(new TextEncoder().encode("two\n"));
      appended.file.close();
      assert.ok(appended.existing >= 0);
      closeFd(appended.existing);
      assert.equal(Deno.readTextFileSync(`${root}/log`), "one\ntwo\n");
      const truncated = openFileBeneath(dir, "log", { how: "truncate", mode: 0o600 });
      truncated.file.close();
      closeFd(truncated.existing);
      assert.equal(Deno.readTextFileSync(`${root}/log`), "");
      const created = openFileBeneath(dir, "new", { how: "truncate", mode: 0o600 });
      created.file.close();
      assert.equal(created.existing, -1);
      assert.equal(Deno.statSync(`${root}/new`).mode! & 0o777, 0o600);

      // A planted link (dangling, or to a file of the caller's), a FIFO, a directory, a hard link.
      Deno.writeTextFileSync(`${root}/victim`, "keep");
      Deno.symlinkSync(`${root}/victim`, `${root}/link`);
      Deno.symlinkSync(`${root}/created-by-follow`, `${root}/dangling`);
      Deno.linkSync(`${root}/victim`, `${root}/hard`);
      const fifo = new Deno.Command("mkfifo", { args: [`${root}/fifo`] }).outputSync();
      assert.ok(fifo.success);
      Deno.mkdirSync(`${root}/dir`);
      for (const how of ["truncate", "append"] as const) {
        const open = (name: string) => () => openFileBeneath(dir, name, { how, mode: 0o600 });
        assert.equal(code(open("link")), "E_PATH_SYMLINK");
        assert.equal(code(open("dangling")), "E_PATH_SYMLINK");
        assert.equal(code(open("fifo")), "E_FILE_TYPE");
        assert.equal(code(open("dir")), "E_FILE_TYPE");
        assert.equal(code(open("hard")), "E_FILE_TYPE");
        assert.equal(code(open("a/b")), "E_PATH_ESCAPE");
        assert.equal(code(open("..")), "E_PATH_ESCAPE");
      }
      assert.equal(Deno.readTextFileSync(`${root}/victim`), "keep");
      assert.equal(exists(`${root}/created-by-follow`), false);
    } finally {
      closeFd(dir);
    }
  });
});
