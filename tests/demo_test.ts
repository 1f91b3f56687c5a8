/**
 * The README's first quick-start command (`./scripts/dev demo`) works and writes its artifacts.
 */
import assert from "node:assert/strict";
import { DENO, ROOT, sessionTest, withTempDir } from "./_helpers.ts";

sessionTest("the demo drives bash and python3, prints a summary and writes artifacts", async () => {
  await withTempDir(async (out) => {
    const result = await new Deno.Command(DENO, {
      args: ["run", "--quiet", "-A", `${ROOT}/scripts/demo.ts`, "--out", out],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(result.stdout);
    assert.equal(result.code, 0, stdout + new TextDecoder().decode(result.stderr));
    assert.equal(stdout.match(/✓/g)?.length, 6 + 10 + 12, stdout); // Two scenarios' steps, then the tour.
    assert.equal(stdout.match(/Passed in/g)?.length, 2, stdout);
    assert.equal(stdout.match(/replay: Match \(checksums verified; [1-9]\d* snapshots/g)?.length, 2, stdout);
    await Deno.stat(`${out}/scenario-menu/snapshots/002-on-cherry.txt`);
    assert.match(stdout, /sum of squares below 10 = 285/);
    assert.match(stdout, /stty size → 30 100/);
    const summary = JSON.parse(await Deno.readTextFile(`${out}/summary.json`));
    assert.equal(summary.exit_code, 0);
    const frames = (await Deno.readTextFile(`${out}/events.ndjson`)).trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    assert.equal(frames[0].type, "start");
    assert.equal(frames.at(-1).type, "exit");
    const cast = (await Deno.readTextFile(`${out}/session.cast`)).split("\n");
    assert.equal(JSON.parse(cast[0]!).version, 2);
  });
});
