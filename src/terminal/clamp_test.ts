import assert from "node:assert/strict";
import { BASE_COST, clampCount, type CLAMPED, CsiClamp, MAX_SEQUENCE } from "./clamp.ts";
import { ScreenTracker } from "./screen.ts";
import { loadXterm, sliceLength, TerminalModel } from "./model.ts";

const SIZE = { cols: 10, rows: 5 } as const;
const HUGE = 2147483647;

/** `text` through a fresh clamp, in one piece and split at every position: both must agree. */
function filter(text: string, size = SIZE): string {
  const whole = new CsiClamp().feed(text, size);
  for (let cut = 1; cut < text.length; cut++) {
    const clamp = new CsiClamp();
    const split = clamp.feed(text.slice(0, cut), size) + clamp.feed(text.slice(cut), size);
    assert.equal(split, whole, `split at ${cut}`);
  }
  return whole;
}

/** The screen that raw xterm (no clamp) draws for `text` on a 10×5 screen. */
async function rawScreen(text: string): Promise<string> {
  const { Terminal, Unicode11Addon } = await loadXterm();
  const term = new Terminal({ ...SIZE, scrollback: 0, allowProposedApi: true, logLevel: "off" });
  term.loadAddon(new Unicode11Addon());
  term.unicode.activeVersion = "11";
  await new Promise<void>((resolve) => term.write(text, resolve));
  const buffer = term.buffer.active;
  const lines = [];
  for (let y = 0; y < SIZE.rows; y++) lines.push(buffer.getLine(buffer.baseY + y)!.translateToString(true));
  const screen = JSON.stringify({ lines, x: Math.min(buffer.cursorX, SIZE.cols - 1), y: buffer.cursorY });
  term.dispose();
  return screen;
}

/** The screen that the (clamping) model draws for `text`. */
async function modelScreen(text: string): Promise<string> {
  const model = await TerminalModel.create(SIZE);
  model.write(text);
  await model.settled();
  const snap = model.snapshot();
  const lines = [...snap.lines];
  while (lines.length < SIZE.rows) lines.push("");
  model.dispose();
  return JSON.stringify({ lines, x: snap.cursor.x, y: snap.cursor.y });
}

/** A busy screen with the cursor at (x, y) (1-based) and optional scroll margins. */
function setup(x: number, y: number, margins = ""): string {
  return "AAAAAAAAAA\r\nBBBB\r\nCCCCCCC\r\nDD\r\nEEEEE" + margins + `\x1b[${y};${x}H`;
}

const CASES: Record<keyof typeof CLAMPED, { bound: (size: typeof SIZE) => number; draw: string[] }> = {
  b: { bound: (s) => clampCount("rep", HUGE, s), draw: ["x", "\u4e2d", "e\u0301"] },
  L: { bound: (s) => s.rows, draw: [""] },
  M: { bound: (s) => s.rows, draw: [""] },
  S: { bound: (s) => s.rows, draw: [""] },
  T: { bound: (s) => s.rows, draw: [""] },
  I: { bound: (s) => s.cols, draw: [""] },
  Z: { bound: (s) => s.cols, draw: [""] },
};

for (const [final, { bound, draw }] of Object.entries(CASES)) {
  Deno.test(`clamp: CSI ${HUGE} ${final} is clamped, draws what the full count draws, and is fast`, async () => {
    const limit = bound(SIZE);
    assert.equal(filter(`\x1b[${HUGE}${final}`), `\x1b[${limit}${final}`);
    assert.equal(filter(`\x9b${HUGE};7${final}`), `\x9b${limit};7${final}`);
    // Counts the terminal can still afford unclamped: the clamped screen is exactly the raw one.
    for (const before of draw) {
      for (
        const [x, y, margins] of [[1, 1, ""], [4, 3, ""], [10, 5, ""], [3, 2, "\x1b[2;4r"], [
          6,
          5,
          "\x1b[2;4r",
        ]] as const
      ) {
        for (const count of [limit - 1, limit, limit + 1, limit + 7, 3 * limit + 11]) {
          const text = setup(x, y, margins) + before + `\x1b[${count}${final}`;
          assert.equal(await modelScreen(text), await rawScreen(text), JSON.stringify(text));
        }
      }
    }
    // The hostile count itself finishes at once (before the clamp it took minutes).
    const started = performance.now();
    await modelScreen(setup(3, 2) + draw[0] + `\x1b[${HUGE}${final}`.repeat(50));
    assert.ok(performance.now() - started < 2000);
  });
}

Deno.test("clamp: harmless sequences, text and split UTF-16 pass unchanged", () => {
  for (
    const text of [
      "plain text \u{1F600} done",
      "\x1b[1;31mred\x1b[0m\x1b[5;7H\x1b[2J\x1b[?1049h\x1b[?25l",
      `\x1b[${HUGE}C\x1b[${HUGE}@\x1b[${HUGE}X`, // Counts xterm clamps itself.
      "\x1b[3b\x1b[5L\x1b[5S\x1b[10I", // At or under the bound.
      `\x1b[?${HUGE}L\x1b[${HUGE} L\x1b[${HUGE}$b`, // Prefix or intermediate: another (or no) sequence.
      "\x1b]0;title\x07\x1bP$qm\x1b\\\x1b(B\x1bM",
    ]
  ) assert.equal(filter(text), text);
});

Deno.test("clamp: C0 inside a sequence runs first, DEL is dropped, aborted sequences pass as they are", () => {
  assert.equal(filter(`\x1b[2147\x07483647L`), "\x07\x1b[5L");
  assert.equal(filter(`\x1b[21474\x7f83647L`), "\x1b[5L");
  assert.equal(filter(`\x1b[${HUGE}\x18L`), `\x1b[${HUGE}\x18L`); // CAN aborts: L is printed.
  assert.equal(filter(`\x1b[${HUGE}\u00e9L`), `\x1b[${HUGE}\u00e9L`);
  assert.equal(filter(`\x1b[${HUGE}\x1b[${HUGE}L`), `\x1b[${HUGE}\x1b[5L`);
  assert.equal(filter(`\x1b\x1b[${HUGE}M`), `\x1b\x1b[5M`);
  assert.equal(filter(`\x1b]0;x\x9b${HUGE}S`), `\x1b]0;x\x9b5S`);
  assert.equal(filter(`\x1b[99999999999999999999999999L`), `\x1b[5L`);
});

Deno.test("clamp: a sequence longer than MAX_SEQUENCE is dropped whole, memory stays bounded", () => {
  const clamp = new CsiClamp();
  let out = clamp.feed("a\x1b[", SIZE);
  for (let i = 0; i < 1000; i++) out += clamp.feed("1;".repeat(1000), SIZE);
  out += clamp.feed("Lb", SIZE);
  assert.equal(out, "ab");
  assert.ok(MAX_SEQUENCE >= 1024);
});

Deno.test("clamp: REP keeps the count modulo the characters per line above the bound", () => {
  const filled = (2 * 5 + 3) * 10;
  assert.equal(clampCount("rep", filled, SIZE), filled);
  assert.equal(clampCount("rep", filled + 10, SIZE), filled);
  assert.equal(clampCount("rep", filled + 13, SIZE), filled + 3);
  assert.equal(clampCount("rep", HUGE, { cols: 0, rows: 0 }), 5 + ((HUGE - 5) % 1));
});

Deno.test("model: slices shrink with the screen area, never below 64 units", () => {
  assert.equal(sliceLength({ cols: 80, rows: 24 }), 4096);
  assert.ok(sliceLength({ cols: 300, rows: 100 }) < 4096);
  assert.equal(sliceLength({ cols: 10000, rows: 10000 }), 64);
});

Deno.test("model: slices shrink with the output's cost per character, never below 64 units", () => {
  const size = { cols: 80, rows: 24 };
  assert.equal(sliceLength(size, 1), 4096);
  assert.equal(sliceLength(size, 0.5), 4096); // Cheaper than plain text is not a thing: never longer.
  assert.equal(sliceLength(size, 2), 2048);
  assert.equal(sliceLength(size, 1000), 64);
  assert.equal(
    sliceLength({ cols: 300, rows: 100 }, 2),
    Math.floor(sliceLength({ cols: 300, rows: 100 }) / 2),
  );
});

Deno.test("model: costly sequences count for their work, so a backlog is bounded in parsing time", async () => {
  const model = await TerminalModel.create({ cols: 80, rows: 24 });
  assert.equal(model.write("plain text"), 10);
  assert.equal(model.write("\x1b[1;31m"), 7 + BASE_COST);
  assert.equal(model.write("\x1bc"), 2 + 80 * 24); // RIS: a full reset.
  assert.equal(model.write(`\x1b[${HUGE}L`), 13 + BASE_COST + 24 * 80); // Clamped to 24 lines first.
  assert.equal(model.write("\x1b[?1049h"), 8 + (80 * 24) / 4);
  await model.settled();
  assert.equal(model.pending, 0);
  model.dispose();
});

Deno.test("model: abandon drops what xterm has not started, later output is ignored, resizes apply", async () => {
  const parsed: number[] = [];
  const model = await TerminalModel.create({ cols: 80, rows: 24, onParsed: (n) => parsed.push(n) });
  const units = model.write("first\r\n" + "\x1bc".repeat(20_000) + "never shown");
  assert.ok(units > 20_000 * 80 * 24);
  const dropped = model.abandon();
  assert.ok(dropped === units, `dropped ${dropped} of ${units}`);
  assert.equal(model.pending, 0);
  assert.deepEqual(parsed, [units]);
  assert.equal(model.write("later"), 0);
  model.resize(40, 10);
  await model.settled();
  const snap = model.snapshot();
  assert.equal(snap.cols, 40);
  assert.ok(!snap.lines.join("").includes("never shown") && !snap.lines.join("").includes("later"));
  model.dispose();
});

Deno.test("screen tracker: finish(0) after a flood marks later snapshots partial; finish(budget) waits first", async () => {
  const flooded = new ScreenTracker({ size: { cols: 80, rows: 24 }, eager: true, onPressure: () => {} });
  await flooded.snapshot();
  flooded.output("\x1bc".repeat(50_000));
  flooded.finish(0);
  flooded.output("after the kill");
  const started = performance.now();
  const snap = await flooded.snapshot();
  assert.ok(performance.now() - started < 1000);
  assert.equal(snap.partial, true);
  assert.ok(!snap.lines.join("").includes("after the kill"));

  const calm = new ScreenTracker({ size: { cols: 80, rows: 24 }, eager: true, onPressure: () => {} });
  calm.output("all of it\r\n");
  calm.finish(5_000);
  const done = await calm.snapshot();
  assert.equal(done.partial, false);
  assert.deepEqual(done.lines, ["all of it"]);
});
