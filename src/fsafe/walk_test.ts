import assert from "node:assert/strict";
import { FileError } from "../errors.ts";
import { closeFd } from "./open.ts";
import { openDirectory } from "./read.ts";
import { walkBeneath, type WalkEntry } from "./walk.ts";

Deno.test("walkBeneath: files and special entries by relative path, directories entered, symlinks refused", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/a/b`, { recursive: true });
    await Deno.writeTextFile(`${dir}/top.txt`, "x");
    await Deno.writeTextFile(`${dir}/a/b/deep.txt`, "y");
    await Deno.symlink("/etc", `${dir}/a/link`);
    await new Deno.Command("mkfifo", { args: [`${dir}/fifo`] }).output();
    const seen: WalkEntry[] = [];
    const root = openDirectory(dir);
    try {
      walkBeneath(root, (entry) => seen.push(entry));
    } finally {
      closeFd(root);
    }
    const summary = seen.map((entry) =>
      "error" in entry ? `${entry.path}: ${(entry.error as FileError).code}` : `${entry.path}: ${entry.kind}`
    ).sort();
    assert.deepEqual(summary, [
      "a/b/deep.txt: file",
      "a/link: E_PATH_SYMLINK",
      "fifo: fifo",
      "top.txt: file",
    ]);
    assert.ok(
      seen.every((entry) => "error" in entry ? entry.error instanceof FileError : entry.identity !== ""),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
