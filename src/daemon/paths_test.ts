import assert from "node:assert/strict";
import { join } from "node:path";
import { SpecterError } from "../errors.ts";
import { privateDir } from "./paths.ts";

function refusal(fn: () => void): SpecterError {
  try {
    fn();
  } catch (error: unknown) {
    if (error instanceof SpecterError) return error;
    throw error;
  }
  throw new Error("Not refused");
}

function withDir(fn: (dir: string) => void): void {
  const dir = Deno.makeTempDirSync({ prefix: "specter-private-" });
  try {
    fn(dir);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

Deno.test("privateDir: makes a missing directory (and its parents) 0700; takes an existing 0700 one", () => {
  withDir((base) => {
    const dir = join(base, "a", "b");
    privateDir(dir);
    assert.equal(Deno.lstatSync(dir).mode! & 0o777, 0o700);
    assert.equal(Deno.lstatSync(join(base, "a")).mode! & 0o777, 0o700);
    privateDir(dir); // Again: it is there and private.
  });
});

Deno.test("privateDir: a directory others may enter is refused with E_DAEMON_UNTRUSTED naming its mode", () => {
  withDir((base) => {
    const dir = join(base, "open");
    Deno.mkdirSync(dir);
    for (const mode of [0o755, 0o770, 0o701]) {
      Deno.chmodSync(dir, mode);
      const error = refusal(() => privateDir(dir));
      assert.equal(error.code, "E_DAEMON_UNTRUSTED");
      assert.equal(error.details.problem, "mode");
      assert.match(error.message, new RegExp(`mode 0${mode.toString(8)}.*chmod 700`));
    }
  });
});

Deno.test("privateDir: a symlink, even to a private directory of this user's, is refused (checked by descriptor)", () => {
  withDir((base) => {
    const target = join(base, "real");
    Deno.mkdirSync(target, { mode: 0o700 });
    const link = join(base, "link");
    Deno.symlinkSync(target, link);
    const error = refusal(() => privateDir(link));
    assert.equal(error.code, "E_DAEMON_UNTRUSTED");
    assert.equal(error.details.problem, "symlink");
    assert.match(error.message, /is a symlink.*rm /);
  });
});

Deno.test("privateDir: a file where the directory should be is refused", () => {
  withDir((base) => {
    const path = join(base, "file");
    Deno.writeTextFileSync(path, "");
    const error = refusal(() => privateDir(path));
    assert.equal(error.code, "E_DAEMON_UNTRUSTED");
    assert.equal(error.details.problem, "type");
  });
});

Deno.test({
  name: "privateDir: a 0700 directory of another uid is refused, naming its owner and the fix",
  ignore: Deno.uid() !== 0, // chown needs root.
  fn: () => {
    withDir((base) => {
      const dir = join(base, "theirs");
      Deno.mkdirSync(dir, { mode: 0o700 });
      Deno.chownSync(dir, 65534, 65534);
      const error = refusal(() => privateDir(dir));
      assert.equal(error.code, "E_DAEMON_UNTRUSTED");
      assert.equal(error.details.problem, "owner");
      assert.equal(error.details.uid, 65534);
      assert.match(error.message, /belongs to uid 65534.*XDG_RUNTIME_DIR.*--socket/);
    });
  },
});
