import assert from "node:assert/strict";
import { OutputCut, tokenCount, truncateOutput } from "./truncate.ts";

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
  // Over twice the budget the output is counted line by line: within a few tokens of the exact count.
  assert.ok(Math.abs(cut.originalTokens - tokenCount(build)) <= 3, `${cut.originalTokens}`);
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

Deno.test("OutputCut: line by line, in pieces of any size, it cuts as a whole text is cut", () => {
  const outputs = [
    build,
    Array.from({ length: 4000 }, (_, i) => (i % 97 === 0 ? `test_${i} FAILED: assert ${i} == 0` : `ok ${i}`))
      .join("\n"),
    "\n\n\n" + "word ".repeat(3000) + "\n" + Array.from({ length: 500 }, (_, i) => `${i}`).join("\n") +
    "\n\n",
    Array.from({ length: 3000 }, (_, i) => `${i + 1}`).join("\n") + "\n",
  ];
  for (const text of outputs) {
    for (const budget of [3, 50, 400, 2000]) {
      if (tokenCount(text) <= 2 * budget) continue;
      const whole = truncateOutput(text, budget, "hint");
      for (const piece of [1, 7, 4096, text.length]) {
        const cut = new OutputCut(budget, { keepAllTokens: 0 });
        for (let i = 0; i < text.length; i += piece) cut.push(text.slice(i, i + piece));
        const got = cut.end("hint");
        assert.equal(got.output, whole.output, `budget ${budget}, pieces of ${piece}`);
        assert.equal(got.truncated, true);
        assert.ok(Math.abs(got.originalTokens - whole.originalTokens) <= 3, `${got.originalTokens}`);
      }
    }
  }
});

Deno.test("OutputCut: 50 MB of output keeps its error line, with its true line number, and its tail", () => {
  const cut = new OutputCut(10_000);
  const chunk = Array.from({ length: 10_000 }, (_, i) => `line ${i}`).join("\n") + "\n";
  for (let i = 0; i < 600; i++) {
    cut.push(chunk);
    if (i === 300) cut.push("ERROR: boom at the middle\n");
  }
  const got = cut.end();
  assert.equal(got.truncated, true);
  // 301 chunks of 10,000 lines before it: its number counts every line of the output.
  assert.match(got.output, /^L3010001: ERROR: boom at the middle$/m);
  assert.match(got.output, /\(lines \d+-\d+\)/);
  const [, , to] = /\(lines (\d+)-(\d+)\)/.exec(got.output)!;
  assert.ok(Number(to) > 5_990_000, `the cut reaches the tail: ${to}`);
  assert.ok(tokenCount(got.output) <= 10_000, `${tokenCount(got.output)}`);
});

Deno.test("OutputCut: a long line in tiny pieces, and long runs of white space, cost time linear in their size", () => {
  const started = performance.now();
  const cut = new OutputCut(1000);
  const piece = "x".repeat(15) + " ";
  for (let i = 0; i < 65_536; i++) cut.push(piece); // 1 MiB with no newline, 16 bytes at a time.
  cut.push("\nERROR: after the long line\n" + "tail\n".repeat(2000));
  const got = cut.end();
  assert.match(got.output, /^L2: ERROR: after the long line$/m);
  const spaces = tokenCount(" ".repeat(100_000));
  assert.ok(spaces > 0);
  // Each took over 7 s when a piece rescanned what was held and a run of spaces went whole to the tokenizer.
  assert.ok(performance.now() - started < 5_000, `${performance.now() - started} ms`);
});

Deno.test("OutputCut: a line over 1 MiB goes on in pieces numbered as the one line they are", () => {
  const cut = new OutputCut(2000);
  cut.push("first\n");
  for (let i = 0; i < 3; i++) cut.push("word ".repeat(250_000)); // 3.75 MB, one line.
  cut.push("\nsecond\nERROR: the third line\n" + "tail\n".repeat(2000));
  const got = cut.end();
  assert.match(got.output, /^L4: ERROR: the third line$/m);
  assert.equal(got.truncated, true);
});
