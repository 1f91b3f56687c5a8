/**
 * `specter view` through the real CLI, over the committed workload recordings: every event it prints is a
 * valid view event, `--text` is what an agent reads, and each view keeps what matters of its program.
 */
import assert from "node:assert/strict";
import { ROOT, runCli, withTempDir } from "./_helpers.ts";
import { ViewEventSchema } from "../src/protocol/mod.ts";
import { screenOf } from "../src/views/mod.ts";

const sanitize = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "view: pytest in the compact view keeps every failure and the summary, without colours",
  ...sanitize,
  async fn() {
    const { code, stdout, stderr } = await runCli(["view", "fixtures/workloads/pytest.cast"]);
    assert.equal(code, 0, stderr);
    const events = stdout.trim().split("\n").map((line) => ViewEventSchema.parse(JSON.parse(line)));
    const text = events.map((e) => e.type === "text" ? e.data : "").join("");
    assert.ok(!text.includes("\x1b"), "no escape sequences");
    for (const test of ["test_capacity[8]", "test_totals", "test_lookup"]) {
      assert.match(text, new RegExp(`^FAILED test_inventory\\.py::${test.replace(/[[\]]/g, "\\$&")}`, "m"));
    }
    assert.match(text, /^=+ 3 failed, 8 passed in [\d.]+s =+$/m);
    for (const event of events) {
      if (event.type === "text") assert.ok(new TextEncoder().encode(event.data).length <= 512);
      assert.equal(typeof event.time, "number");
    }
  },
});

Deno.test({
  name: "view: --mode parsed shows top as its screen, a pager's prompt as a prompt",
  ...sanitize,
  async fn() {
    const top = await runCli(["view", "--mode", "parsed", "fixtures/workloads/top.cast"]);
    assert.equal(top.code, 0, top.stderr);
    const events = top.stdout.trim().split("\n").map((line) => ViewEventSchema.parse(JSON.parse(line)));
    const screens = events.filter((e) => e.type === "screen");
    assert.equal(screens.length, 1, "the screen once, then only what changed");
    assert.ok(screens.every((s) => s.type === "screen" && s.rows.some((r) => /^Tasks: +\d+ total/.test(r))));
    const diffs = events.filter((e) => e.type === "rows");
    assert.ok(diffs.length >= 1 && diffs.every((d) => d.type === "rows" && d.rows.length < 15));
    // top's last newline scrolls the screen up a row: one scroll, not the whole screen again.
    assert.ok(diffs.some((d) => d.type === "rows" && d.scrolled === 1));
    const last = screenOf(events)!;
    assert.match(last[0]!, /^Tasks: +\d+ total/);
    assert.match(last.find((r) => /^ +PID USER/.test(r)) ?? "", /COMMAND$/);

    const pager = await runCli(["view", "--mode", "parsed", "--text", "fixtures/workloads/netcli-more.cast"]);
    assert.equal(pager.code, 0, pager.stderr);
    assert.equal(pager.stdout.match(/^\[pager prompt: --More--\]$/gm)?.length, 7);
    assert.ok(!/--More--/.test(pager.stdout.replace(/^\[pager prompt: --More--\]$/gm, "")));
    const config = new Deno.Command("python3", { args: ["fixtures/tuis/netcli.py", "--dump-config"] })
      .outputSync();
    for (const line of new TextDecoder().decode(config.stdout).split("\n")) {
      if (line.trim() !== "") assert.ok(pager.stdout.includes(line), `missing ${JSON.stringify(line)}`);
    }
  },
});

Deno.test({
  name: "view: a file that is not a recording is E_USAGE and exit 2, naming the line",
  ...sanitize,
  async fn() {
    await withTempDir(async (dir) => {
      await Deno.writeTextFile(`${dir}/bad.cast`, '{"version":2,"width":80,"height":24}\n[0.1,"o"]\n');
      const bad = await runCli(["view", `${dir}/bad.cast`]);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /E_USAGE: Recording ".*bad\.cast" line 2/);
      await Deno.writeFile(`${dir}/latin1.cast`, new Uint8Array([0x7b, 0xff, 0x7d]));
      const latin = await runCli(["view", `${dir}/latin1.cast`]);
      assert.equal(latin.code, 2);
      assert.match(latin.stderr, /E_USAGE: Recording ".*latin1\.cast" is not valid UTF-8/);
    });
  },
});

Deno.test({
  name: "view: a reader that goes away (| head) ends it quietly with exit 141, not an untyped E_IO",
  ...sanitize,
  async fn() {
    await withTempDir(async (dir) => {
      // Far more output than a pipe holds, so that the writer meets the closed pipe.
      const lines = Array.from(
        { length: 20_000 },
        (_, i) => JSON.stringify([i / 1000, "o", `line ${i}\r\n`]),
      );
      await Deno.writeTextFile(
        `${dir}/big.cast`,
        ['{"version":2,"width":80,"height":24}', ...lines].join("\n") + "\n",
      );
      const script = `set -o pipefail; "${Deno.execPath()}" run --quiet -A main.ts view ${dir}/big.cast ` +
        `2>${dir}/stderr | head -c 1 >/dev/null`;
      const { code } = await new Deno.Command("bash", { args: ["-c", script], cwd: ROOT }).output();
      assert.equal(code, 141);
      // Quiet, as `git log | head` is: the reader had what it wanted (E_STDOUT_CLOSED is not printed).
      assert.equal(await Deno.readTextFile(`${dir}/stderr`), "");
    });
  },
});
