import assert from "node:assert/strict";
import { CommandMarks } from "./command_marks.ts";
import type { FrameBody } from "../protocol/mod.ts";

function marks(nonce?: string) {
  const frames: FrameBody[] = [];
  let now = 1000;
  const m = new CommandMarks({
    emit: (b) => void frames.push(b),
    now: () => now,
    ...(nonce === undefined ? {} : { nonce }),
  });
  return { frames, m, step: (ms: number) => void (now += ms) };
}

Deno.test("CommandMarks: C then D;status is one command frame with the line typed and the output range", () => {
  const { frames, m, step } = marks();
  m.output("\x1b]133;D;0\x07\x1b]133;A\x07$ ", 9); // The first prompt: no command yet.
  m.input("make\x1b[D\x1b[Cx");
  m.input("\r");
  m.output("\x1b]133;C\x07", 11);
  step(250);
  m.output("built\r\n\x1b]133;D;2\x07\x1b]133;A\x07$ ", 14);
  assert.deepEqual(frames, [{
    type: "command",
    command: "makex",
    exit_code: 2,
    duration_ms: 250,
    output_from_seq: 11,
    output_to_seq: 14,
    // No nonce: any program could have printed these marks.
    reported_by: "output",
  }]);
});

Deno.test("CommandMarks: marks split across reads are still seen (ST or BEL terminated)", () => {
  const { frames, m } = marks();
  for (const part of ["\x1b]1", "33;C\x1b", "\\out", "put\x1b]133;D", ";", "7\x1b\\"]) m.output(part, 12);
  assert.equal(frames.length, 1);
  assert.equal((frames[0] as { exit_code: number }).exit_code, 7);
});

Deno.test("CommandMarks: a D without a status has a null exit code; garbage is ignored; memory is bounded", () => {
  const { frames, m } = marks();
  m.output("\x1b]133;C\x07", 1);
  m.output("\x1b]133;D\x07", 2);
  assert.equal((frames[0] as { exit_code: number | null }).exit_code, null);
  m.output("\x1b]133;" + "x".repeat(100_000), 3); // Never terminated: not carried whole.
  m.output("\x1b]133;C\x07\x1b]133;D;1\x07", 4);
  assert.equal(frames.length, 2);
  m.input("y".repeat(1_000_000));
});

Deno.test("CommandMarks: with a nonce, marks without it (in a file being shown) end nothing", () => {
  const { frames, m } = marks("n0nce123");
  m.output("\x1b]133;C;specter=n0nce123\x07", 1);
  m.output("cat evil.txt: \x1b]133;D;0\x07 \x1b]133;D;0;specter=wrong\x07", 2);
  assert.equal(frames.length, 0);
  m.output("\x1b]133;D;1;specter=n0nce123\x07", 3);
  assert.equal(frames.length, 1);
  assert.equal((frames[0] as { exit_code: number }).exit_code, 1);
  assert.equal(
    (frames[0] as { reported_by: string }).reported_by,
    "shell",
    "the nonce's marks are the shell's",
  );
});

Deno.test("CommandMarks: a prompt mark (A) is passed on, only with the nonce when one is set", () => {
  let prompts = 0;
  const m = new CommandMarks({ emit: () => {}, now: () => 0, prompt: () => prompts++, nonce: "abcdef0123" });
  m.output("\x1b]133;A\x07$ ", 1);
  assert.equal(prompts, 0);
  m.output("\x1b]133;A;specter=abcdef0123\x07$ ", 2);
  assert.equal(prompts, 1);
});
