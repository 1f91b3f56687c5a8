/**
 * A scenario's own regexes run over hostile program output: a pattern with catastrophic backtracking
 * (in a wait, a redaction or `screen_matches`) must not stop the clock. Each step fails on time.
 */
import assert from "node:assert/strict";
import { runCli, sessionTest, withTempDir } from "./_helpers.ts";

// 40 a's then "!": `^(a+)+$` tries 2^40 ways to split them before it gives up.
// No newline: the cursor stays on that line, where a prompt regex looks.
const PROGRAM = `[/bin/sh, -c, "printf 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!'; sleep 30"]`;

type Result = {
  status: string;
  duration_ms: number;
  steps: { status: string; message?: string; duration_ms: number }[];
};

const CASES: readonly [string, string, RegExp, number][] = [
  [
    "a wait_for regex",
    `steps:\n  - wait_for: { text: "!" }\n  - wait_for: { regex: "^(a+)+$" }\n    timeout_ms: 700\n`,
    /Timed out after 700 ms waiting for regex/,
    700,
  ],
  [
    "a wait_for prompt",
    `steps:\n  - wait_for: { text: "!" }\n  - wait_for: { prompt: "^(a|aa)+$" }\n    timeout_ms: 700\n`,
    /Timed out after 700 ms waiting for a prompt/,
    700,
  ],
  [
    "a run.normalize redaction inside a wait",
    `steps:\n  - wait_for: { text: "zzz" }\n    timeout_ms: 700\n`,
    /Timed out after 700 ms waiting for text/,
    700,
  ],
  [
    "expect screen_matches",
    `steps:\n  - wait_for: { text: "!" }\n  - expect: { screen_matches: "^(a+)+$" }\n`,
    /did not finish within 2000 ms/,
    2000,
  ],
];

for (const [what, steps, message, budget] of CASES) {
  sessionTest(`catastrophic backtracking in ${what} fails the step on time`, async () => {
    await withTempDir(async (dir) => {
      const normalize = what.includes("normalize")
        ? `  normalize: [{ pattern: "(a+)+$", replacement: "" }]\n`
        : "";
      await Deno.writeTextFile(
        `${dir}/s.yaml`,
        `version: 1\nname: redos\nrun:\n  argv: ${PROGRAM}\n  policy: basic\n${normalize}${steps}`,
      );
      const started = performance.now();
      const { code, stdout, stderr } = await runCli([
        "test",
        "--json",
        "--artifacts",
        `${dir}/a`,
        `${dir}/s.yaml`,
      ]);
      const elapsed = performance.now() - started;
      const result = JSON.parse(stdout) as Result;
      assert.equal(result.status, "Failed", stdout + stderr);
      assert.equal(code, 1);
      const failed = result.steps.find((s) => s.status === "failed")!;
      assert.match(failed.message ?? "", message);
      // The step ends within its budget plus polling slack, not after the regex gave up (hours).
      assert.ok(failed.duration_ms < budget + 1500, `the step took ${failed.duration_ms} ms`);
      assert.ok(elapsed < 20_000, `the whole run took ${Math.round(elapsed)} ms`);
    });
  }, 60_000);
}
