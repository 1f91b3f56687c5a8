import assert from "node:assert/strict";
import { tokenCount, truncateOutput } from "./truncate.ts";

const build = Array.from(
  { length: 3000 },
  (_, i) => i === 1500 ? "src/net.c:88: error: undefined symbol 'parse_port'" : `compiling unit ${i} of 3000`,
).join("\n") + "\nBUILD FAILED: 1 error\n";

Deno.test("truncateOutput: under the budget nothing changes", () => {
  assert.deepEqual(truncateOutput("a\nb\n", 100), { output: "a\nb\n", truncated: false, originalTokens: 4 });
});

Deno.test("truncateOutput: head and tail kept, the error line from the middle kept with its number, within budget", () => {
  const cut = truncateOutput(build, 500, "read_output for the rest");
  assert.equal(cut.truncated, true);
  assert.equal(cut.originalTokens, tokenCount(build));
  assert.ok(tokenCount(cut.output) <= 500, `${tokenCount(cut.output)} tokens`);
  assert.ok(cut.output.startsWith("compiling unit 0 of 3000\n"));
  assert.ok(cut.output.endsWith("BUILD FAILED: 1 error\n"), cut.output.slice(-80));
  assert.match(cut.output, /^L1501: src\/net\.c:88: error: undefined symbol 'parse_port'$/m);
  assert.match(
    cut.output,
    /\[… \d+ tokens cut \(lines \d+-\d+\); 1 line of it that report problems follow; read_output for the rest …\]/,
  );
});

Deno.test("truncateOutput: a single huge line keeps its end", () => {
  const line = "x".repeat(50_000) + " FAILED";
  const cut = truncateOutput(line, 300);
  assert.equal(cut.truncated, true);
  assert.ok(cut.output.endsWith(" FAILED"));
  assert.ok(tokenCount(cut.output) <= 300, `${tokenCount(cut.output)}`);
});

Deno.test("tokenCount: exact for ordinary text, linear for a hostile megabyte-long word", () => {
  const text = "FAILED test_inventory.py::test_totals - AssertionError: assert 16 == 32\n";
  assert.equal(tokenCount(text), 19);
  const started = performance.now();
  const count = tokenCount("a".repeat(1_000_000));
  // Counted in pieces: close to the exact count (one token per 8 letters), without the quadratic cost.
  assert.ok(count >= 100_000 && count <= 130_000, `${count}`);
  assert.ok(performance.now() - started < 10_000, `${performance.now() - started} ms`);
});

Deno.test("truncateOutput: a budget of a few tokens still shows the first and the last words", () => {
  const seq = Array.from({ length: 5000 }, (_, i) => `${i + 1}`).join("\n") + "\n";
  for (const budget of [1, 2, 3, 4, 5]) {
    const cut = truncateOutput(seq, budget, "read_output for the rest");
    assert.equal(cut.truncated, true);
    const lines = cut.output.split("\n");
    assert.equal(lines[0], "1", `${budget}: ${JSON.stringify(cut.output)}`);
    assert.ok(lines.includes("5000"), `${budget}: ${JSON.stringify(cut.output)}`);
  }
  const prose = "The quick brown fox jumps over the lazy dog and keeps running until the very end\n".repeat(
    50,
  );
  const cut = truncateOutput(prose, 3);
  assert.match(cut.output, /^The\b/);
  assert.match(cut.output, /\bend\n?$/);
});
