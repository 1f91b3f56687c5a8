import assert from "node:assert/strict";
import { CHUNK_BYTES, chunks, CompactView, PAGER_PROMPT } from "./compact.ts";
import { renderText } from "./render.ts";
import type { ViewEvent } from "../protocol/mod.ts";

/** Everything `parts` become in a compact view, flushed once at the end. */
function compact(...parts: string[]): ViewEvent[] {
  const view = new CompactView();
  for (const part of parts) view.push(part);
  return view.end();
}

const text = (events: readonly ViewEvent[]) => renderText(events);

Deno.test("compact: colours, modes, titles and hyperlink targets are dropped, the text stays", () => {
  const events = compact(
    "\x1b]0;title\x07\x1b[?25l\x1b[1;31mFAILED\x1b[0m test_a\r\n",
    "\x1b]8;;https://example.invalid\x1b\\link\x1b]8;;\x1b\\ text\r\n",
  );
  assert.equal(text(events), "FAILED test_a\nlink text\n");
});

Deno.test("compact: a progress line redrawn with CR reaches the text once, in its final state", () => {
  const view = new CompactView();
  view.push("Downloading  10%\rDownloading  50%");
  assert.deepEqual(view.flush(), [{ type: "line_update", data: "Downloading  50%" }]);
  view.push("\rDownloading 100%\r\nDone\r\n");
  assert.deepEqual(view.end(), [{ type: "text", data: "Downloading 100%\nDone\n" }]);
});

Deno.test("compact: a redraw shorter than the line keeps what the terminal keeps, unless erased", () => {
  assert.equal(text(compact("abcdef\rxy\n")), "xycdef\n");
  assert.equal(text(compact("abcdef\rxy\x1b[K\n")), "xy\n");
});

Deno.test("compact: a spinner drawn with backspaces leaves only its last frame", () => {
  assert.equal(text(compact("Installing |\b/\b-\b\\\b \bdone\n")), "Installing done\n");
});

Deno.test("compact: repeated lines are counted, runs of blank lines become one", () => {
  const events = compact("warn: x\n".repeat(5) + "\n\n\n\nend\n");
  assert.equal(text(events), "warn: x\n[previous line repeated 4 more times]\n\nend\n");
  assert.equal(text(compact("a\na\nb\n")), "a\n[previous line repeated 1 more time]\nb\n");
});

Deno.test("compact: a status row drawn between cursor save and restore is a line update, not content", () => {
  const view = new CompactView();
  view.push("Unpacking foo ...\r\n\x1b7\x1b[24;0f\x1b[42mProgress: [ 40%]\x1b[49m [####....] \x1b8");
  view.push("Setting up foo ...\r\n\x1b7\x1b[24;0fProgress: [ 80%] [######..] \x1b8");
  assert.deepEqual(view.end(), [
    { type: "text", data: "Unpacking foo ...\nSetting up foo ...\n" },
    { type: "line_update", data: "Progress: [ 80%] [######..]", row: 24 },
  ]);
});

Deno.test("compact: a status row is gone once the program resets its scroll region (apt is done)", () => {
  const view = new CompactView();
  view.push("\x1b7\x1b[0;23r\x1b8Unpacking foo ...\r\n\x1b7\x1b[24;0fProgress: [ 40%] [####....] \x1b8");
  assert.deepEqual(view.flush(), [
    { type: "text", data: "Unpacking foo ...\n" },
    { type: "line_update", data: "Progress: [ 40%] [####....]", row: 24 },
  ]);
  view.push("Setting up foo ...\r\n\x1b7\x1b[0;24r\x1b8\x1b[1A\x1b[J");
  const events = view.end();
  assert.deepEqual(events, [
    { type: "text", data: "Setting up foo ...\n" },
    { type: "line_update", data: "", row: 24 },
  ]);
  assert.equal(renderText(events), "Setting up foo ...\n");
  // Reported once: a later reset has nothing to take away.
  view.push("\x1b[r");
  assert.deepEqual(view.end(), []);
});

Deno.test("compact: lines redrawn from above (cursor up) are replaced while not flushed", () => {
  const view = new CompactView();
  view.push("layer a: 10%\nlayer b:  5%\n");
  view.push("\x1b[2A\rlayer a: 90%\x1b[K\nlayer b: 70%\x1b[K\n");
  view.push("\x1b[2A\rlayer a: done\x1b[K\nlayer b: done\x1b[K\n");
  assert.equal(text(view.end()), "layer a: done\nlayer b: done\n");
});

Deno.test("compact: escape sequences split across pushes are still understood", () => {
  assert.equal(text(compact("re", "d\x1b", "[3", "1mX\x1b[0", "m\n")), "redX\n");
  assert.equal(text(compact("a\x1b]0;ti", "tle\x1b", "\\b\n")), "ab\n");
});

Deno.test("compact: at a pause an unfinished line goes out (a prompt), and is not repeated when it ends", () => {
  const view = new CompactView();
  view.push("Continue? [y/N] ");
  assert.deepEqual(view.flush(), []); // No pause yet: the line may still change.
  assert.deepEqual(view.flush({ partial: true }), [{ type: "text", data: "Continue? [y/N]" }]);
  view.push("y\r\nok\r\n");
  assert.equal(text(view.end()), " y\nok\n");
});

Deno.test("compact: a start sent at a pause and then redrawn into something else is not run into its end", () => {
  const view = new CompactView();
  view.push("Building dependency tree... 50%");
  assert.deepEqual(view.flush({ partial: true }), [{
    type: "text",
    data: "Building dependency tree... 50%",
  }]);
  // apt redraws the line from its start (a carriage return) with its final state.
  view.push("\rBuilding dependency tree... Done\r\nnext\r\n");
  assert.equal(text(view.end()), "\nBuilding dependency tree... Done\nnext\n");
});

Deno.test("compact: a pager's prompt is reported as a prompt, and its erasure leaves no content", () => {
  const view = new CompactView();
  view.push("line 1\r\nline 2\r\n --More-- ");
  assert.deepEqual(view.flush({ partial: true }), [
    { type: "text", data: "line 1\nline 2\n" },
    { type: "prompt", kind: "pager", text: "--More--" },
  ]);
  // IOS-style erasure: backspaces, spaces, backspaces, then the next line from column 0.
  view.push("\b".repeat(10) + " ".repeat(10) + "\b".repeat(10) + "line 3\r\n");
  assert.deepEqual(view.end(), [{ type: "text", data: "line 3\n" }]);
});

Deno.test("compact: text comes in chunks of at most 512 bytes, cut at line ends", () => {
  const lines = Array.from({ length: 200 }, (_, i) => `line ${i}:${"é".repeat(i % 7)}`);
  const events = compact(lines.join("\n") + "\n");
  for (const event of events) {
    assert.equal(event.type, "text");
    if (event.type !== "text") continue;
    assert.ok(new TextEncoder().encode(event.data).length <= CHUNK_BYTES);
    assert.ok(event.data.endsWith("\n"), JSON.stringify(event.data.slice(-20)));
  }
  assert.equal(text(events), lines.join("\n") + "\n");
});

Deno.test("chunks: a line longer than the limit is cut between characters", () => {
  const long = "€".repeat(400); // 1200 bytes.
  const pieces = chunks(long, 512);
  assert.equal(pieces.join(""), long);
  for (const piece of pieces) assert.ok(new TextEncoder().encode(piece).length <= 512);
  assert.deepEqual(pieces.map((p) => p.length), [170, 170, 60]);
});

Deno.test("PAGER_PROMPT: pager prompts and only them", () => {
  for (const prompt of ["--More--", " --More-- ", "--More--(42%)", "(END)", ":", "lines 1-20/100 20%"]) {
    assert.ok(PAGER_PROMPT.test(prompt), prompt);
  }
  for (const line of ["More info", "key: value", "(END) of file", "--more-- x"]) {
    assert.ok(!PAGER_PROMPT.test(line), line);
  }
});

Deno.test("compact: hostile cursor moves cannot make a line grow past the widest terminal", () => {
  const events = compact("a\x1b[99999999Cb\x1b[5;99999999Hc\x1b[2147483647Gd\x1b[;H\x1b[5Hx\n");
  for (const line of renderText(events).split("\n")) assert.ok(line.length <= 1000, `${line.length}`);
  assert.ok(renderText(events).includes("x"));
});

Deno.test("compact: a cursor saved and never restored does not swallow the output after it", () => {
  const text = renderText(
    compact("$ cat notes.txt\n\x1b7\x1b[1;1Hhello\nFAILED: 3 tests\nerror: build broken\n"),
  );
  assert.match(text, /^FAILED: 3 tests$/m);
  assert.match(text, /^error: build broken$/m);
});

Deno.test("compact: hostile output stays linear (cursor padding, status rows, cursor-up churn)", () => {
  const started = performance.now();
  let padded = "";
  for (let i = 0; i < 10_000; i++) padded += `\x1b[990C${i}\n`;
  renderText(compact(padded));
  let rows = "";
  for (let i = 0; i < 80_000; i++) rows += `\x1b7\x1b[${i};1Hrow ${i}\x1b8`;
  const events = compact(rows);
  assert.ok(events.length <= 501, `${events.length} events`); // Rows beyond 500 count as the last one.
  compact("x".repeat(990) + "\n" + "\x1b[A\n".repeat(100_000));
  // Each of these was seconds to minutes when quadratic; linear, they take well under a second here.
  assert.ok(performance.now() - started < 15_000, `${Math.round(performance.now() - started)} ms`);
});

Deno.test("compact: a full-screen program's row redrawn as it was is not sent again; a changed one is", () => {
  const view = new CompactView();
  view.push("\x1b[H\x1b[2Jtop - 10:00:01\x1b[K\r\nTasks: 3 total\x1b[K\r\n    1 root init\x1b[K\r\n");
  assert.equal(text(view.flush()), "top - 10:00:01\nTasks: 3 total\n    1 root init\n");
  // The next refresh redraws every row from the top; only the clock changed.
  view.push("\x1b[Htop - 10:00:02\x1b[K\r\nTasks: 3 total\x1b[K\r\n    1 root init\x1b[K\r\n");
  assert.equal(text(view.flush()), "top - 10:00:02\n");
  // The same text on another row is content of that row: sent.
  view.push("\x1b[1;1Htop - 10:00:02\x1b[K\r\n    1 root init\x1b[K\r\n");
  assert.equal(text(view.flush()), "    1 root init\n");
  // Back to line output (the alternate screen left): rows are not known, repeats are content again.
  view.push("\x1b[?1049l$ echo\r\n$ echo\r\n");
  assert.equal(text(view.end()), "$ echo\n[previous line repeated 1 more time]\n");
});

Deno.test("compact: rows past the tallest screen are not rows (a log after one cursor placement)", () => {
  const view = new CompactView();
  // Placed once, then a log: its lines have rows 1, 2, … and past 500 no row at all, so a line repeating
  // one sent 600 lines earlier is content, and the table of rows stays bounded.
  const log = Array.from({ length: 1200 }, (_, i) => `line ${i % 600}`).join("\r\n") + "\r\n";
  view.push("\x1b[1;1H" + log);
  const out = text(view.end());
  assert.equal(out.split("\n").filter((line) => line === "line 550").length, 2);
  assert.equal(out.split("\n").filter((line) => line === "line 5").length, 2);
});

Deno.test("compact: after a clear, the same output at the same rows is content again", () => {
  const view = new CompactView();
  // A shell: `clear; cat notes` twice. The second time reads as the first but was drawn on a cleared screen.
  const run = "\x1b[H\x1b[2J$ cat notes\r\nremember the milk\r\n";
  view.push(run);
  assert.equal(text(view.flush()), "$ cat notes\nremember the milk\n");
  view.push(run);
  assert.equal(text(view.flush()), "$ cat notes\nremember the milk\n");
  // Erased below the cursor (top's end of refresh): those rows are forgotten, the ones above are not.
  view.push("\x1b[H$ cat notes\r\n\x1b[J");
  view.push("\x1b[H$ cat notes\r\nremember the milk\r\n");
  // Row 1 is as it was: not sent. Row 2 was erased, so its line is sent, and (as the last line sent was the
  // same text) counted as a repeat.
  assert.equal(text(view.end()), "[previous line repeated 1 more time]\n");
});
