/**
 * Results of calls whose output passed the session's memory window (its first 64 KiB and last MiB): the
 * frames it passed are read back from the output log, so the cut is of the whole output. No line is made
 * of the end of one line and the start of another, line numbers and the token count are the whole
 * output's, and a line that reports a problem is kept wherever it was.
 */
import assert from "node:assert/strict";
import { AgentTools, OutputCut } from "../src/agent/mod.ts";
import { NO_SANDBOX, ROOT } from "./_helpers.ts";
import { withLoggedTools } from "./_agent_tools.ts";

const sanitize = { sanitizeOps: false, sanitizeResources: false };
const SEQ = 500_000;

/** `seq 1 n` as the compact view gives it. */
function seqText(n: number): string {
  return Array.from({ length: n }, (_, i) => `${i + 1}`).join("\n") + "\n";
}

Deno.test({
  name: "big output: seq 1 500000 (3.4 MB) in one call: every line shown is the line of that number, the " +
    "token count is the whole output's, and the same in every run",
  ...sanitize,
  fn: () =>
    withLoggedTools(async (tools) => {
      const expected = new OutputCut(1_000_000);
      expected.push(seqText(SEQ));
      const whole = expected.end();
      const counts = new Set<number>();
      for (let run = 0; run < 2; run++) {
        const ran = await tools.execCommand({
          cmd: `seq 1 ${SEQ}`,
          yield_time_ms: 30_000,
          max_output_tokens: 1_000_000,
        });
        assert.equal(ran.exit_code, 0);
        assert.equal(ran.truncated, true);
        counts.add(ran.original_token_count);
        const lines = ran.output.split("\n");
        const marker = lines.findIndex((line) => line.startsWith("[… "));
        assert.ok(marker > 0, ran.output.slice(0, 200));
        for (let i = 0; i < marker; i++) assert.equal(lines[i], `${i + 1}`, `head line ${i + 1}`);
        const [, from, to] = /\(lines (\d+)-(\d+)\)/.exec(lines[marker]!)!;
        assert.equal(Number(from), marker + 1, lines[marker]);
        const tail = lines.slice(marker + 1).filter((line) => line !== "");
        assert.equal(tail[0], `${Number(to) + 1}`, "the tail starts after the cut lines");
        for (let i = 1; i < tail.length; i++) assert.equal(Number(tail[i]), Number(tail[i - 1]) + 1);
        assert.equal(tail.at(-1), `${SEQ}`);
        assert.doesNotMatch(ran.output, /are not shown here|no longer held/);
      }
      assert.deepEqual([...counts], [whole.originalTokens], "the whole output's count, every run");
    }),
});

Deno.test({
  name: "big output: an error line 1.4 MB into 2.8 MB of output is kept with its true line number",
  ...sanitize,
  fn: () =>
    withLoggedTools(async (tools) => {
      const ran = await tools.execCommand({
        cmd: "seq 1 200000; echo 'ERROR: boom at middle'; seq 1 200000 | sed 's/^/x/'",
        yield_time_ms: 30_000,
      });
      assert.equal(ran.exit_code, 0);
      assert.equal(ran.truncated, true);
      assert.match(ran.output, /^L200001: ERROR: boom at middle$/m);
      assert.match(ran.output, /^x200000$/m);
    }),
});

Deno.test({
  name: "big output: without an output log the gap's marker has a line of its own: nothing on either side " +
    "of it is joined into one line",
  ...sanitize,
  async fn() {
    const tools = new AgentTools({ base: { sandbox: NO_SANDBOX, cwd: ROOT } });
    try {
      for (let run = 0; run < 3; run++) {
        const ran = await tools.execCommand({
          cmd: `seq 1 ${SEQ}`,
          yield_time_ms: 30_000,
          max_output_tokens: 1_000_000,
          token_mode: run === 2 ? "raw" : "compact",
        });
        assert.equal(ran.exit_code, 0);
        assert.equal(ran.truncated, true);
        const lines = ran.output.split(/\r?\n/);
        const gap = lines.findIndex((line) =>
          /^\[frames \d+-\d+ are (not shown here|no longer held)/.test(line)
        );
        assert.ok(gap >= 0, ran.output.slice(0, 300));
        // Before the gap (when the window kept the start): lines 1, 2, … (the last may be cut short).
        for (let i = 0; i < gap - 1; i++) assert.equal(lines[i], `${i + 1}`);
        if (gap > 0) assert.ok(`${gap}`.startsWith(lines[gap - 1]!), `before the gap: ${lines[gap - 1]}`);
        // After it: a number's end (the window may start within a line), then whole numbers in order.
        const after = lines.slice(gap + 1).filter((line) => line !== "");
        const next = Number(after[1]);
        assert.ok(`${next - 1}`.endsWith(after[0]!), `after the gap: ${after[0]}, then ${after[1]}`);
        for (let i = 2; i < after.length; i++) assert.equal(Number(after[i]), Number(after[i - 1]) + 1);
        assert.equal(after.at(-1), `${SEQ}`);
      }
    } finally {
      await tools.close();
    }
  },
});
