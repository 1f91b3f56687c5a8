import assert from "node:assert/strict";
import {
  decodeExecResult,
  decodeRunResult,
  encodeExecResult,
  encodeExecResultAround,
  encodeRunResult,
  type ExecResult,
  type RunResult,
} from "./results.ts";

const EXEC: ExecResult = {
  success: false,
  session_id: "s-1",
  output: "hello\n",
  exit_code: 3,
  signal: null,
  timed_out: false,
  truncated: false,
  duration_ms: 12,
  protected_created: ["/w/.envrc"],
  error: { code: "E_RECORD", message: "The disk is full" },
};

const RUN: RunResult = {
  version: 1,
  name: "menu",
  scenario: "/s/menu.yaml",
  status: "Failed",
  error: null,
  session_id: "s-2",
  steps: [
    { index: 0, line: 7, action: "press down", status: "passed", duration_ms: 3 },
    {
      index: 1,
      line: 8,
      action: 'wait_for {"text":"x"}',
      status: "failed",
      duration_ms: 1000,
      message: "Timed out",
      diagnostic: {
        expected: "x",
        actual_screen: "menu",
        last_frames: [{ seq: 4, ts: 1, type: "idle", dur_ms: 500 }],
      },
    },
    { index: 2, line: 9, action: "press enter", status: "skipped", duration_ms: 0 },
  ],
  exit: { code: null, signal: "KILL", timed_out: true },
  duration_ms: 1200,
  artifacts: "/a",
};

Deno.test("an exec result survives its writer and reader unchanged, keys in the order exec prints them", () => {
  const text = encodeExecResult(EXEC);
  assert.equal(text, JSON.stringify(EXEC));
  assert.deepEqual(decodeExecResult(text), { value: EXEC });
});

Deno.test("an exec result written around its output is the line encodeExecResult makes", () => {
  // An id and an error message that hold the key's text cannot move the cut: their quotes are escaped.
  const tricky = { ...EXEC, session_id: '","output":"', error: { code: "E_X", message: '"output":""' } };
  for (const result of [EXEC, tricky, { ...EXEC, output: "" }]) {
    for (const output of ["", "hello\n", '"\\\u0000\u001b[1m€😀\r\n', "\ud800 lone"]) {
      const { head, tail } = encodeExecResultAround({ ...result, output: "ignored" });
      assert.equal(
        head + JSON.stringify(output).slice(1, -1) + tail,
        encodeExecResult({ ...result, output }),
      );
    }
  }
  assert.throws(() => encodeExecResultAround({ ...EXEC, exit_code: 1.5 }), "validated like the whole");
});

Deno.test("a run result survives its writer and reader unchanged", () => {
  const text = encodeRunResult(RUN);
  assert.equal(text, JSON.stringify(RUN, null, 2) + "\n");
  assert.deepEqual(decodeRunResult(text), { value: RUN });
});

Deno.test("the writers refuse what the schema does not describe", () => {
  assert.throws(() => encodeExecResult({ ...EXEC, exit_code: 1.5 }));
  assert.throws(() => encodeExecResult({ ...EXEC, extra: 1 } as ExecResult));
  assert.throws(() => encodeRunResult({ ...RUN, status: "Maybe" } as unknown as RunResult));
});

Deno.test("the readers name the first problem and its field", () => {
  assert.deepEqual(decodeExecResult("{"), { problem: "The exec result is not valid JSON" });
  const missing = decodeExecResult(JSON.stringify({ ...EXEC, success: undefined }));
  assert.ok("problem" in missing && /field "success"/.test(missing.problem), JSON.stringify(missing));
  const step = decodeRunResult(JSON.stringify({ ...RUN, steps: [{ ...RUN.steps[0], status: "ok" }] }));
  assert.ok("problem" in step && /field "steps\.0\.status"/.test(step.problem), JSON.stringify(step));
  assert.ok("problem" in decodeRunResult(JSON.stringify({ ...RUN, version: 2 })));
});
