import assert from "node:assert/strict";
import { TerminalModel, type TerminalModelOptions } from "./model.ts";
import { ScreenSnapshotSchema } from "../protocol/mod.ts";
import { snapshotText } from "./snapshot.ts";
import { Watermarks } from "./watermarks.ts";

/** A model fed `chunks` (each written without awaiting), settled. */
async function render(chunks: string | (string | Uint8Array)[], options: TerminalModelOptions = {}) {
  const model = await TerminalModel.create({ cols: 20, rows: 5, ...options });
  for (const chunk of typeof chunks === "string" ? [chunks] : chunks) model.write(chunk);
  await model.settled();
  return model;
}

Deno.test("model: plain text, trailing blanks and empty lines trimmed, cursor position", async () => {
  const model = await render("hello   \r\nworld\r\n\r\n");
  const snap = model.snapshot();
  assert.deepEqual(snap.lines, ["hello", "world"]);
  assert.deepEqual(snap.cursor, { x: 0, y: 3, visible: true });
  assert.equal(snap.cols, 20);
  assert.equal(snap.rows, 5);
  assert.equal(snap.alt_screen, false);
  assert.equal(snap.title, "");
  assert.equal(snap.partial, false);
  assert.equal(snap.cells, undefined);
  ScreenSnapshotSchema.parse(snap);
  model.dispose();
});

Deno.test("model: explicit cursor moves and erases", async () => {
  const model = await render("abcdef\x1b[3D\x1b[K\x1b[3;5HX\x1b[1;1H\x1b[2K");
  assert.deepEqual(model.snapshot().lines, ["", "", "    X"]);
  assert.deepEqual(model.snapshot().cursor, { x: 0, y: 0, visible: true });
  model.dispose();
});

Deno.test("model: colours and attributes as compact runs", async () => {
  const model = await render(
    "\x1b[1;31mred\x1b[0m \x1b[38;5;208m208\x1b[0m \x1b[38;2;1;2;255mrgb\x1b[0m\r\n" +
      "\x1b[2;3;4mdiu\x1b[0m\x1b[7m inv \x1b[0m\x1b[44m  \x1b[0m\r\n" + "\x1b[92;101mB\x1b[0mplain",
  );
  const snap = model.snapshot({ cells: true });
  ScreenSnapshotSchema.parse(snap);
  assert.deepEqual(snap.lines, ["red 208 rgb", "diu inv", "Bplain"]);
  assert.deepEqual(snap.cells, [
    [
      { text: "red", fg: 1, bold: true },
      { text: " " },
      { text: "208", fg: 208 },
      { text: " " },
      { text: "rgb", fg: "#0102ff" },
    ],
    [
      { text: "diu", dim: true, italic: true, underline: true },
      { text: " inv ", inverse: true },
      // Styled blanks are kept in cells (a coloured bar), though `lines` trims them.
      { text: "  ", bg: 4 },
    ],
    [{ text: "B", fg: 10, bg: 9 }, { text: "plain" }],
  ]);
  model.dispose();
});

Deno.test("model: a full-width inverse status line keeps its cells; empty rows in between are []", async () => {
  const model = await render("top\x1b[5;1H\x1b[7m" + "status".padEnd(20) + "\x1b[0m\x1b[1;4H");
  const snap = model.snapshot({ cells: true });
  assert.deepEqual(snap.lines, ["top", "", "", "", "status"]);
  assert.deepEqual(snap.cells, [[{ text: "top" }], [], [], [], [{
    text: "status".padEnd(20),
    inverse: true,
  }]]);
  model.dispose();
});

Deno.test("model: alternate screen enter (1049h) and leave restores the main screen", async () => {
  const model = await render("main text\r\n\x1b[?1049h\x1b[H\x1b[2Jfull screen app\x1b[5;1Hstatus");
  let snap = model.snapshot();
  assert.equal(snap.alt_screen, true);
  assert.deepEqual(snap.lines, ["full screen app", "", "", "", "status"]);
  model.write("\x1b[?1049l");
  await model.settled();
  snap = model.snapshot();
  assert.equal(snap.alt_screen, false);
  assert.deepEqual(snap.lines, ["main text"]);
  assert.deepEqual(snap.cursor, { x: 0, y: 1, visible: true });
  model.dispose();
});

Deno.test("model: window title via OSC 0 and OSC 2, BEL or ST terminated", async () => {
  const model = await render("\x1b]0;first\x07");
  assert.equal(model.snapshot().title, "first");
  model.write("\x1b]2;second ✓\x1b\\");
  await model.settled();
  assert.equal(model.snapshot().title, "second ✓");
  model.dispose();
});

Deno.test("model: cursor visibility (DECTCEM) and application cursor keys (DECCKM)", async () => {
  const model = await render("\x1b[?25l\x1b[?1h");
  assert.equal(model.snapshot().cursor.visible, false);
  assert.equal(model.applicationCursor, true);
  model.write("\x1b[?25h\x1b[?1l");
  await model.settled();
  assert.equal(model.snapshot().cursor.visible, true);
  assert.equal(model.applicationCursor, false);
  // A full reset (RIS) switches DECCKM off too: the reason the model outranks the output scanner.
  model.write("\x1b[?1h\x1bc");
  await model.settled();
  assert.equal(model.applicationCursor, false);
  model.dispose();
});

Deno.test("model: wide characters and emoji take two cells (Unicode 11 widths)", async () => {
  const model = await render("😀|\r\n日本|\r\n✅|\r\ne\u0301|");
  const snap = model.snapshot({ cells: true });
  assert.deepEqual(snap.lines, ["😀|", "日本|", "✅|", "e\u0301|"]);
  assert.deepEqual(snap.cursor, { x: 2, y: 3, visible: true });
  model.write("\x1b[1;1H😀😀😀😀😀😀😀😀😀😀X"); // 10 emoji fill 20 columns exactly: X wraps.
  await model.settled();
  // X overwrote the first half of 日: its orphaned second half becomes a blank, as in real terminals.
  assert.deepEqual(model.snapshot().lines.slice(0, 2), ["😀😀😀😀😀😀😀😀😀😀", "X 本|"]);
  assert.deepEqual(snap.cells?.[0], [{ text: "😀|" }]);
  model.dispose();
});

Deno.test("model: a UTF-8 character split across byte writes is joined", async () => {
  const bytes = new TextEncoder().encode("né😀");
  const model = await render([bytes.slice(0, 2), bytes.slice(2, 5), bytes.slice(5)]);
  assert.deepEqual(model.snapshot().lines, ["né😀"]);
  model.dispose();
});

Deno.test("model: a carriage-return progress bar leaves only its last state", async () => {
  const frames: string[] = [];
  for (let p = 0; p <= 100; p += 10) frames.push(`\r[${"#".repeat(p / 10).padEnd(10)}] ${p}%`);
  const model = await render([...frames, "\r\ndone\r\n"]);
  assert.deepEqual(model.snapshot().lines, ["[##########] 100%", "done"]);
  model.dispose();
});

Deno.test("model: output that scrolls keeps the last screenful (no scrollback by default)", async () => {
  const lines = Array.from({ length: 50 }, (_, i) => `line ${i}`);
  const model = await render(lines.join("\r\n"));
  assert.deepEqual(model.snapshot().lines, lines.slice(-5));
  model.dispose();
});

Deno.test("model: resize applies after the output written before it, not before", async () => {
  const model = await TerminalModel.create({ cols: 10, rows: 3 });
  // Written but not parsed yet when resize is called: drawn at 10 columns, then the screen grows.
  model.write("0123456789ab");
  model.resize(30, 4);
  model.write("\r\nafter resize: 30 columns wide");
  await model.settled();
  const snap = model.snapshot();
  assert.equal(snap.cols, 30);
  assert.equal(snap.rows, 4);
  assert.deepEqual(snap.lines, ["0123456789", "ab", "after resize: 30 columns wide"]);
  // Resizing a settled model takes effect at once.
  model.resize(12, 2);
  assert.equal(model.snapshot().cols, 12);
  model.dispose();
});

Deno.test("model: snapshots and their text form do not depend on how output was chunked", async () => {
  const input = "\x1b]2;t\x07\x1b[?1049h\x1b[1;32mgreen\x1b[0m 😀 日本\r\n\x1b[3;2Hxyz\x1b[?25l";
  const whole = await render(input);
  const bytes = new TextEncoder().encode(input);
  const single = await render([...bytes].map((b) => new Uint8Array([b])));
  const a = whole.snapshot({ cells: true });
  const b = single.snapshot({ cells: true });
  assert.deepEqual(a, b);
  assert.equal(snapshotText(a), snapshotText(b));
  assert.equal(
    snapshotText(a),
    '# 20x5 cursor 4,2 hidden alt=true title="t"\ngreen 😀 日本\n\n xyz\n',
  );
  whole.dispose();
  single.dispose();
});

Deno.test("model: writes are not awaited; pending counts down to 0 and onParsed feeds watermarks", async () => {
  const changes: boolean[] = [];
  const marks = new Watermarks((paused) => changes.push(paused), 256 * 1024, 64 * 1024);
  const model = await TerminalModel.create({ cols: 80, rows: 24, onParsed: (n) => marks.done(n) });
  const chunk = "x".repeat(999) + "\n";
  for (let i = 0; i < 1000; i++) {
    marks.add(chunk.length);
    model.write(chunk);
  }
  // 1 MB queued synchronously: nothing parsed yet, far above the high watermark.
  assert.equal(model.pending, 1_000_000);
  assert.deepEqual(changes, [true]);
  await model.settled();
  assert.equal(model.pending, 0);
  assert.equal(marks.pending, 0);
  assert.deepEqual(changes, [true, false]);
  model.dispose();
});

Deno.test("model: after dispose writes are ignored and settled resolves", async () => {
  const model = await render("x");
  model.dispose();
  model.write("more");
  model.resize(5, 5);
  await model.settled();
  assert.equal(model.pending, 0);
});

Deno.test("model: output that makes xterm throw (a shrunk screen, #6063) resets the screen instead of ending the process", async () => {
  // Found by the terminal fuzzer: xterm 6.0.0 leaves a row of the alternate screen without a buffer line
  // after this resize, and the erase then throws inside xterm's own parse timer (an uncaught error).
  const uncaught: unknown[] = [];
  const onError = (event: ErrorEvent) => {
    event.preventDefault();
    uncaught.push(event.error);
  };
  globalThis.addEventListener("error", onError);
  try {
    const model = await TerminalModel.create({ cols: 80, rows: 24 });
    model.resize(31, 2);
    model.write("\x1b[7I\x1b[?1049h\n\x1b[1J");
    // settled() resolving at all is the point: an unguarded throw never runs the write's callback.
    await model.settled();
    assert.equal(model.faults, 1);
    model.write("still here");
    await model.settled();
    const snap = model.snapshot();
    ScreenSnapshotSchema.parse(snap);
    assert.equal(snap.partial, true); // Output was lost to the reset.
    assert.deepEqual([snap.cols, snap.rows], [31, 2]);
    assert.deepEqual(snap.lines, ["still here"]);
    // Let any timer xterm scheduled run before looking for uncaught errors.
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(uncaught, []);
    model.dispose();
  } finally {
    globalThis.removeEventListener("error", onError);
  }
});

Deno.test("model: a screen without faults is not partial, and faults start at 0", async () => {
  const model = await render("\x1b[?1049h\x1b[1Jtext");
  assert.equal(model.faults, 0);
  assert.equal(model.snapshot().partial, false);
  model.dispose();
});

Deno.test("model: hyperlinks do not outlive a reset (RIS after OSC 8 leaked a whole screen each time)", async () => {
  const model = await TerminalModel.create({ cols: 80, rows: 24 });
  const link = "\x1b]8;;http://example.com\x1b\\";
  for (let i = 0; i < 200; i++) model.write(`\x1bc${link}link ${i}\x1b]8;;\x1b\\\r\n`);
  await model.settled();
  // The links on the screen now, not one per reset: xterm kept them (and their old screens) before.
  assert.equal(model.heldLinks, 1);
  assert.deepEqual(model.snapshot().lines, ["link 199"]);
  model.write("\x1bc");
  await model.settled();
  assert.equal(model.heldLinks, 0);
  model.dispose();
});

Deno.test("model: xterm's deadline warnings never reach console.warn; other warnings do", async () => {
  // A fresh process: the filter wraps whatever console.warn is when xterm is first loaded.
  const script = `
    const seen = [];
    console.warn = (...args) => seen.push(args.join(" "));
    const { loadXterm } = await import(${JSON.stringify(new URL("./model.ts", import.meta.url).href)});
    await loadXterm();
    console.warn("task queue exceeded allotted deadline by 25ms");
    console.warn("something else");
    console.warn("task queue exceeded allotted deadline by 25ms", "and more");
    console.log(JSON.stringify(seen));
  `;
  const { code, stdout } = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", script],
    cwd: new URL("../..", import.meta.url).pathname, // deno.json maps the npm packages.
    stdout: "piped",
    stderr: "inherit",
  }).output();
  assert.equal(code, 0);
  assert.deepEqual(JSON.parse(new TextDecoder().decode(stdout)), [
    "something else",
    "task queue exceeded allotted deadline by 25ms and more",
  ]);
});
