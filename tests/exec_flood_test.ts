/**
 * `specter exec` under a flood, as a real process in a real sandbox: the result stays true while the output
 * is kept as bytes, made plain as it arrives and written in pieces. Exact outputs where the budget makes
 * them exact (`yes` cut at 64 KiB is a known number of lines and a half), the flags and the exit fields for
 * a timeout, a budget, and a program that ignores the polite signals. How much memory and time this takes
 * is `deno task bench:flood`'s to measure, not these tests'.
 */
import assert from "node:assert/strict";
import { decodeExecResult, type ExecResult } from "../src/protocol/mod.ts";
import { EXEC_DEFAULT_MAX_OUTPUT } from "../src/cli/exec.ts";
import { runCli, sessionTest } from "./_helpers.ts";

const SANDBOX = ["--policy", "basic"] as const;
const BUDGET = 64 * 1024;
/** One line of a flood of colours: 14 bytes on the terminal (`\r\n`), `x` in plain text. */
const COLOUR_LINE = "\x1b[1;31mx\x1b[0m\r\n";

/** Runs `specter exec ARGS`; its stdout must be exactly one line: the result, valid under its schema. */
async function exec(args: readonly string[]): Promise<{ code: number; result: ExecResult }> {
  const { code, stdout, stderr } = await runCli(["exec", ...SANDBOX, ...args]);
  assert.ok(stdout.endsWith("\n") && stdout.indexOf("\n") === stdout.length - 1, `one line: ${stderr}`);
  const decoded = decodeExecResult(stdout.slice(0, -1));
  assert.ok("value" in decoded, `the result decodes: ${"problem" in decoded ? decoded.problem : ""}`);
  return { code, result: decoded.value };
}

sessionTest("exec -- yes cut by --max-output: exactly the budget's lines, plain and raw", async () => {
  // 65536 bytes of `y\r\n` are 21845 lines and a `y`.
  const lines = Math.floor(BUDGET / 3);
  const plain = await exec(["--max-output", "64k", "--", "yes"]);
  assert.equal(plain.result.output, "y\n".repeat(lines) + "y");
  assert.equal(plain.result.truncated, true);
  assert.equal(plain.result.timed_out, false);
  assert.equal(plain.result.signal, "KILL");
  assert.equal(plain.result.exit_code, null);
  assert.equal(plain.result.success, false);
  assert.notEqual(plain.code, 0);

  const raw = await exec(["--raw", "--max-output", "64k", "--", "yes"]);
  assert.equal(raw.result.output, "y\r\n".repeat(lines) + "y", "every byte up to the budget, none after");
  assert.equal(new TextEncoder().encode(raw.result.output).length, BUDGET);
  assert.equal(raw.result.truncated, true);
});

sessionTest(
  "a flood of colours cut by --max-output: plain text of exactly what the budget let in",
  async () => {
    // 4681 whole lines (65534 bytes), then the first two bytes of a sequence (`ESC [`): dropped, as
    // plainText drops them at the end of the text.
    const lines = Math.floor(BUDGET / COLOUR_LINE.length);
    const flood = ["--", "sh", "-c", `exec yes "$(printf '\\033[1;31mx\\033[0m')"`];
    const plain = await exec(["--max-output", "64k", ...flood]);
    assert.equal(plain.result.output, "x\n".repeat(lines));
    assert.equal(plain.result.truncated, true);

    const raw = await exec(["--raw", "--max-output", "64k", ...flood]);
    assert.equal(raw.result.output, COLOUR_LINE.repeat(lines) + "\x1b[");
  },
);

sessionTest("exec --timeout under a flood: timed out by SIGHUP, its output whole lines of y", async () => {
  const { code, result } = await exec(["--timeout", "1s", "--", "yes"]);
  assert.equal(result.timed_out, true);
  assert.equal(result.signal, "HUP");
  assert.equal(result.truncated, false);
  assert.equal(result.exit_code, null);
  assert.equal(code, 124);
  assert.ok(result.output.length > 0);
  assert.ok(new TextEncoder().encode(result.output).length <= EXEC_DEFAULT_MAX_OUTPUT);
  assert.match(result.output, /^(y\n)*y?$/, "nothing but lines of y (the last may be cut)");
});

sessionTest(
  "a flood that ignores SIGHUP and SIGTERM is killed after its grace, its output kept",
  async () => {
    const args = ["--timeout", "500ms", "--grace", "300ms", "--", "sh", "-c", "trap '' HUP TERM; exec yes"];
    const { code, result } = await exec(args);
    assert.equal(result.timed_out, true);
    assert.equal(result.signal, "KILL");
    assert.equal(result.truncated, false);
    assert.equal(code, 124);
    assert.ok(result.duration_ms >= 800, `the grace was given: ${result.duration_ms} ms`);
    assert.match(result.output, /^(y\n)+y?$/);
  },
);
