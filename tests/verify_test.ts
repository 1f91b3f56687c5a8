/**
 * `specter verify` as a CI gate: exit 0 on a matching golden, non-zero with a unified diff on drift.
 */
import assert from "node:assert/strict";
import { runCli, sessionTest, withTempDir } from "./_helpers.ts";

const specter = (args: string[]) => runCli(args);

sessionTest("verify: a matching screen golden exits 0; drift exits 1 with a unified diff", async () => {
  await withTempDir(async (dir) => {
    const golden = `${dir}/screen.txt`;
    assert.equal((await specter(["verify", golden, "--update", "--", "printf", "hello\\nworld\\n"])).code, 0);
    assert.match(
      await Deno.readTextFile(golden),
      /^# 80x24 cursor 0,2 visible alt=false title=""\nhello\nworld\n/,
    );
    const ok = await specter(["verify", golden, "--", "printf", "hello\\nworld\\n"]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /verify: OK/);
    const drift = await specter(["verify", golden, "--", "printf", "hello\\nWORLD\\n"]);
    assert.equal(drift.code, 1);
    assert.match(drift.stdout, /^--- .*screen\.txt\n\+\+\+ screen of printf/);
    assert.match(drift.stdout, /\n-world\n\+WORLD\n/);
    assert.match(drift.stdout, /verify: DRIFT/);
  });
});

sessionTest("verify: normalization hides run-to-run noise; --strict does not", async () => {
  await withTempDir(async (dir) => {
    const golden = `${dir}/t.txt`;
    const cmd = ["--policy", "basic", "--what", "transcript", "--", "sh", "-c", 'echo "scratch: $(mktemp)"'];
    assert.equal((await specter(["verify", golden, "--update", ...cmd])).code, 0);
    assert.equal(await Deno.readTextFile(golden), "scratch: /tmp/<tmp>\n");
    assert.equal((await specter(["verify", golden, ...cmd])).code, 0);
    const strict = await specter(["verify", golden, "--strict", ...cmd]);
    assert.equal(strict.code, 1, "a random temp path differs without normalization");
  });
});

sessionTest("verify: a .cast golden (a real recording) is compared as a transcript", async () => {
  await withTempDir(async (dir) => {
    const cast = `${dir}/golden.cast`;
    const record = await specter(["run", "--record", cast, "--", "printf", "one\\ntwo\\n"]);
    assert.equal(record.code, 0, record.stderr);
    assert.equal((await specter(["verify", cast, "--", "printf", "one\\ntwo\\n"])).code, 0);
    const drift = await specter(["verify", cast, "--", "printf", "one\\nthree\\n"]);
    assert.equal(drift.code, 1);
    assert.match(drift.stdout, /-two\n\+three/);
    assert.equal(
      (await specter(["verify", cast, "--update", "--", "true"])).code,
      2,
      "a .cast golden is recorded, not updated",
    );
  });
});
