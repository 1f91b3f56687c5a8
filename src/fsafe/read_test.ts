import assert from "node:assert/strict";
import { FileError } from "../errors.ts";
import { readFileBeneath, readRegularFile } from "./read.ts";

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof FileError) return error.code;
    throw error;
  }
  return "none";
}

Deno.test("readRegularFile: FIFOs and devices fail at once with E_FILE_TYPE (no hang)", () => {
  const dir = Deno.makeTempDirSync({ prefix: "specter-fsafe-" });
  try {
    const fifo = `${dir}/fifo`;
    new Deno.Command("mkfifo", { args: [fifo] }).outputSync();
    const started = performance.now();
    assert.equal(code(() => readRegularFile(fifo, { maxBytes: 100 })), "E_FILE_TYPE");
    assert.equal(code(() => readFileBeneath(dir, "fifo", { maxBytes: 100 })), "E_FILE_TYPE");
    assert.equal(code(() => readRegularFile("/dev/zero", { maxBytes: 100 })), "E_FILE_TYPE");
    assert.equal(code(() => readRegularFile("/dev/urandom", { maxBytes: 100 })), "E_FILE_TYPE");
    assert.equal(code(() => readRegularFile(dir, { maxBytes: 100 })), "E_FILE_TYPE");
    assert.equal(performance.now() - started < 2000, true);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("readRegularFile: the cap is exact, and a missing file is E_PATH_NOT_FOUND", () => {
  const dir = Deno.makeTempDirSync({ prefix: "specter-fsafe-" });
  try {
    Deno.writeFileSync(`${dir}/ten`, new Uint8Array(10).fill(65));
    assert.equal(readRegularFile(`${dir}/ten`, { maxBytes: 10 }).length, 10);
    assert.equal(code(() => readRegularFile(`${dir}/ten`, { maxBytes: 9 })), "E_FILE_TOO_LARGE");
    assert.equal(code(() => readRegularFile(`${dir}/none`, { maxBytes: 9 })), "E_PATH_NOT_FOUND");
    assert.equal(readRegularFile(`${dir}/ten`, { maxBytes: 10, noFollow: true }).length, 10);
    Deno.symlinkSync(`${dir}/ten`, `${dir}/link`);
    assert.equal(readRegularFile(`${dir}/link`, { maxBytes: 10 }).length, 10);
    assert.equal(
      code(() => readRegularFile(`${dir}/link`, { maxBytes: 10, noFollow: true })),
      "E_PATH_SYMLINK",
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("readFileBeneath: a file swapped for a symlink to a host secret is refused", () => {
  const dir = Deno.makeTempDirSync({ prefix: "specter-fsafe-" });
  try {
    Deno.writeTextFileSync(`${dir}/golden.txt`, "ok");
    assert.equal(readFileBeneath(dir, "golden.txt", { maxBytes: 10 }).length, 2);
    Deno.removeSync(`${dir}/golden.txt`);
    Deno.symlinkSync("/etc/passwd", `${dir}/golden.txt`);
    assert.equal(code(() => readFileBeneath(dir, "golden.txt", { maxBytes: 1 << 20 })), "E_PATH_SYMLINK");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
