/**
 * The fixture TUIs in `fixtures/tuis/`, driven for real the way scenarios drive them: Debian's python3 on
 * a PTY inside the bubblewrap sandbox, keys through `Session.press`/`write`, waits on specific output
 * (never sleeps). Each drive runs twice at once and both runs must produce byte-identical output.
 *
 * @module
 */
import assert from "node:assert/strict";
import { checkPolicyDocument } from "../src/policy/mod.ts";
import { spawn } from "../src/session/spawn_session.ts";
import { type Frame, type Session, type StartFrame, Transcript } from "../src/mod.ts";
import { ROOT, sessionTest } from "./_helpers.ts";

const FIXTURES_DIR = `${ROOT}/fixtures/tuis`;
const PYTHON = "/usr/bin/python3";
const FIXTURES = ["menu.py", "progress.py", "fullscreen.py", "prompt.py", "pager.py"] as const;
const ESC = "\x1b";
const CSI = `${ESC}[`;

/** System programs may run, the fixtures are readable, nothing is writable, no network. */
const POLICY = (() => {
  const { policy, problems } = checkPolicyDocument(
    { version: 1, exec: ["/usr/bin"], fs: { read: [FIXTURES_DIR] } },
    "test",
    { workspace: "/tmp", home: "/tmp", acks: { unsafeWrite: false, network: false } },
  );
  if (policy === null) throw new Error(`Bad fixture policy: ${JSON.stringify(problems)}`);
  return policy;
})();

const sessions = new Set<Session>();

/** A session test that also ends any fixture still running when it fails. */
function fixtureTest(name: string, fn: () => Promise<void>): void {
  sessionTest(name, async () => {
    try {
      await fn();
    } finally {
      const open = [...sessions].filter((s) => !s.finished);
      sessions.clear();
      await Promise.all(open.map((s) => s.terminate(0)));
    }
  });
}

/** Starts `fixtures/tuis/<fixture>` with `args` in the sandbox. */
function launch(fixture: string, args: string[] = [], cols = 80, rows = 24): Transcript {
  const session = spawn({
    argv: [PYTHON, `${FIXTURES_DIR}/${fixture}`, ...args],
    cols,
    rows,
    idleMs: 0,
    timeoutMs: 20_000,
    sandbox: { mode: "bwrap", policy: POLICY },
  });
  sessions.add(session);
  return new Transcript(session);
}

/** Does `act`, then waits for `needle` in the output that follows it; returns that output. */
async function after(t: Transcript, act: () => void, needle: string | RegExp): Promise<string> {
  const mark = t.text.length;
  act();
  await t.output(needle, 10_000, mark);
  return t.textSince(mark);
}

/** What a drive leaves to assert on. */
interface Run {
  readonly t: Transcript;
  readonly code: number | null;
}

/** Runs `drive` twice at once and checks that both runs wrote exactly the same bytes. */
async function twice(drive: () => Promise<Run>): Promise<Run> {
  const [a, b] = await Promise.all([drive(), drive()]);
  assert.equal(a.t.text, b.t.text, "two runs must print the same output");
  assert.deepEqual(a.t.bytes, b.t.bytes, "two runs must print byte-identical output");
  assert.equal(a.code, b.code);
  return a;
}

/** Waits for the exit; checks the run was sandboxed and ended by itself. */
async function finish(t: Transcript): Promise<Run> {
  const exit = await t.exit(15_000);
  const start = t.frames[0] as StartFrame;
  assert.equal(start.sandbox, "bwrap");
  assert.equal(start.policy, "test");
  assert.equal(exit.timed_out, false);
  return { t, code: exit.code };
}

/** Everything the test typed, as sent to the terminal (key names encoded). */
function sentInput(t: Transcript): string[] {
  return t.frames.filter((f): f is Extract<Frame, { type: "stdin" }> => f.type === "stdin").map((f) =>
    f.data
  );
}

// --- menu.py ---

/** A menu line as drawn: the current item in reverse video with a `>` marker. */
function menuLine(item: string, current: boolean): string {
  return current ? `\r${CSI}7m> ${item}${CSI}0m${CSI}K\r\n` : `\r  ${item}${CSI}K\r\n`;
}

function menu(items: string[], current: number): string {
  return items.map((item, i) => menuLine(item, i === current)).join("");
}

const FRUITS = ["apple", "banana", "cherry", "date", "elderberry"];

fixtureTest("menu.py: both arrow encodings move, Enter prints the selected item and exits 0", async () => {
  const run = await twice(async () => {
    const t = launch("menu.py");
    await t.output(menu(FRUITS, 0));
    assert.equal(t.session.applicationCursor, true, "the menu switches DECCKM on");
    await after(t, () => t.session.press("down"), menu(FRUITS, 1)); // ESC O B (application mode)
    await after(t, () => t.session.write(`${CSI}B`), menu(FRUITS, 2)); // ESC [ B
    await after(t, () => t.session.write(`${CSI}A`), menu(FRUITS, 1)); // ESC [ A
    await after(t, () => t.session.press("up"), menu(FRUITS, 0)); // ESC O A
    await after(t, () => t.session.press("up"), `${CSI}5A${menu(FRUITS, 0)}`); // Stays on the first item.
    for (let i = 1; i <= 3; i++) {
      // Other keys are ignored: the output after "x" and Down is exactly one redraw.
      const out = await after(t, () => ["x", "down"].forEach((k) => t.session.press(k)), menu(FRUITS, i));
      assert.equal(out, `${CSI}5A${menu(FRUITS, i)}`);
    }
    await after(t, () => t.session.press("enter"), "selected: date\r\n");
    const run = await finish(t);
    assert.equal(t.session.applicationCursor, false, "DECCKM is switched off at exit");
    return run;
  });
  assert.equal(run.code, 0);
  assert.ok(
    run.t.text.startsWith(`${CSI}?1h${CSI}?25lPick an item (Up/Down moves, Enter selects, q quits)\r\n`),
  );
  assert.ok(run.t.text.endsWith(`${menu(FRUITS, 3)}${CSI}?1l${CSI}?25hselected: date\r\n`));
  const input = sentInput(run.t);
  assert.ok(input.includes(`${ESC}OB`) && input.includes(`${ESC}OA`), "press() sent SS3 arrows");
  assert.ok(input.includes(`${CSI}B`) && input.includes(`${CSI}A`));
});

fixtureTest("menu.py: items from argv; q quits with code 1 and selects nothing", async () => {
  const items = ["red", "green", "blue"];
  const run = await twice(async () => {
    const t = launch("menu.py", items);
    await t.output(menu(items, 0));
    await after(t, () => t.session.press("down"), menu(items, 1));
    await after(t, () => t.session.press("down"), menu(items, 2));
    await after(t, () => t.session.press("down"), `${CSI}3A${menu(items, 2)}`); // Stays on the last item.
    t.session.press("q");
    return await finish(t);
  });
  assert.equal(run.code, 1);
  assert.ok(run.t.text.endsWith(`${CSI}?1l${CSI}?25h`));
  assert.ok(!run.t.text.includes("selected:"));
});

// --- progress.py ---

function bar(step: number, steps: number): string {
  const filled = Math.floor(step * 10 / steps);
  return `\r[${"#".repeat(filled)}${" ".repeat(10 - filled)}] ${Math.floor(step * 100 / steps)}%`;
}

fixtureTest("progress.py: one step per Space (default 10 steps), then done and exit 0", async () => {
  const run = await twice(async () => {
    const t = launch("progress.py");
    await t.output(bar(0, 10));
    for (let step = 1; step <= 10; step++) {
      const out = await after(t, () => t.session.press("space"), bar(step, 10));
      assert.ok(out.startsWith(bar(step, 10)));
    }
    await t.output("\r\ndone\r\n");
    return await finish(t);
  });
  assert.equal(run.code, 0);
  assert.ok(run.t.text.includes("\r[#####     ] 50%"));
  assert.equal(
    run.t.text,
    `Press Space to advance (q quits)\r\n${
      Array.from({ length: 11 }, (_, step) => bar(step, 10)).join("")
    }\r\ndone\r\n`,
  );
});

fixtureTest(
  "progress.py: STEPS from argv, other keys ignored, q quits with 1, bad STEPS is a usage error",
  async () => {
    const four = await twice(async () => {
      const t = launch("progress.py", ["4"]);
      await t.output(bar(0, 4));
      for (let step = 1; step <= 4; step++) {
        // A key other than Space draws nothing: the output after it is exactly the next bar.
        const out = await after(t, () => {
          t.session.write("x");
          t.session.press("space");
        }, bar(step, 4));
        assert.ok(step === 4 ? out.startsWith(bar(4, 4)) : out === bar(step, 4), JSON.stringify(out));
      }
      await t.output("done\r\n");
      return await finish(t);
    });
    assert.equal(four.code, 0);
    assert.ok(four.t.text.includes(`${bar(1, 4)}${bar(2, 4)}${bar(3, 4)}${bar(4, 4)}\r\ndone\r\n`));
    assert.ok(four.t.text.includes("\r[##        ] 25%"));

    const quit = await twice(async () => {
      const t = launch("progress.py", ["3"]);
      await t.output(bar(0, 3));
      await after(t, () => t.session.press("space"), bar(1, 3));
      t.session.press("q");
      return await finish(t);
    });
    assert.equal(quit.code, 1);
    assert.ok(!quit.t.text.includes("done"));

    const bad = await twice(async () => await finish(launch("progress.py", ["zero"])));
    assert.equal(bad.code, 2);
    assert.match(bad.t.text, /usage: progress\.py \[STEPS\]/);
  },
);

// --- fullscreen.py ---

function statusLine(cols: number, rows: number, key: string, count: number): string {
  const status = ` size: ${cols}x${rows} | last key: ${key} | keys: ${count}`.slice(0, cols);
  return `${CSI}${rows};1H${CSI}7m${status.padEnd(cols)}${CSI}0m`;
}

function bottomBorder(cols: number, rows: number): string {
  return `${CSI}${rows - 1};1H└${"─".repeat(cols - 2)}┘`;
}

fixtureTest(
  "fullscreen.py: alt screen, box and status line redrawn on keys and on resize; q restores",
  async () => {
    const run = await twice(async () => {
      const t = launch("fullscreen.py");
      await t.output(statusLine(80, 24, "none", 0));
      await after(t, () => t.session.press("x"), statusLine(80, 24, "x", 1));
      await after(t, () => t.session.press("down"), statusLine(80, 24, "down", 2));
      await after(t, () => t.session.press("f5"), statusLine(80, 24, "f5", 3));
      await after(t, () => t.session.press("ctrl-up"), statusLine(80, 24, "ctrl-up", 4));
      await after(t, () => t.session.press("space"), statusLine(80, 24, "space", 5));
      const wide = await after(t, () => t.session.resize(100, 30), statusLine(100, 30, "space", 5));
      assert.ok(wide.includes(bottomBorder(100, 30)), "the box follows the new size");
      const small = await after(t, () => t.session.resize(40, 10), statusLine(40, 10, "space", 5));
      const title = " Specter fullscreen fixture ";
      assert.ok(small.includes(`${CSI}1;1H┌─${title}${"─".repeat(40 - 3 - title.length)}┐`));
      assert.ok(small.includes(bottomBorder(40, 10)));
      await after(t, () => t.session.press("q"), `${CSI}?1049l${CSI}?25h`);
      return await finish(t);
    });
    assert.equal(run.code, 0);
    const text = run.t.text;
    assert.ok(text.startsWith(`${CSI}?1049h${CSI}?25l${CSI}H${CSI}2J`), "enters the alt screen first");
    assert.ok(text.endsWith(`${CSI}?1049l${CSI}?25h`), "leaves it last, cursor visible");
    assert.equal(text.split(`${CSI}?1049h`).length, 2);
    assert.equal(text.split(`${CSI}2J`).length - 1, 8, "one full redraw at start, per key and per resize");
  },
);

// --- prompt.py ---

function promptLine(text: string, back: number): string {
  return `\rname> ${text}${CSI}K${back > 0 ? `${CSI}${back}D` : ""}`;
}

fixtureTest(
  "prompt.py: line editing (arrows, Backspace, Home/End, Ctrl-A/E/U/D), greetings, Ctrl-D exits 0",
  async () => {
    const run = await twice(async () => {
      const t = launch("prompt.py");
      const s = t.session;
      const greet = (name: string) => `\r\nhello, ${name}!\r\nname> `;
      await t.output("name> ");
      // Insert in the middle after moving left.
      s.write("Wrld");
      const moved = await after(
        t,
        () => ["left", "left", "left"].forEach((k) => s.press(k)),
        promptLine("Wrld", 3),
      );
      assert.ok(moved.endsWith(promptLine("Wrld", 3)));
      await after(t, () => s.write("o"), promptLine("World", 3));
      await after(t, () => s.press("right"), promptLine("World", 2));
      await after(t, () => s.press("enter"), greet("World"));
      // Backspace at the end and in the middle.
      s.write("Bobx");
      await after(t, () => s.press("backspace"), promptLine("Bob", 0));
      s.press("left");
      await after(t, () => s.press("backspace"), promptLine("Bb", 1));
      await after(t, () => s.write("o"), promptLine("Bob", 1));
      await after(t, () => s.press("enter"), greet("Bob"));
      // Home/End and Ctrl-A/Ctrl-E.
      s.write("ice");
      await after(t, () => s.press("home"), promptLine("ice", 3));
      s.write("Al");
      await after(t, () => s.press("end"), promptLine("Alice", 0));
      s.write(" Smith");
      await after(t, () => s.press("ctrl-a"), promptLine("Alice Smith", 11));
      s.write("Dr. ");
      await after(t, () => s.press("ctrl-e"), promptLine("Dr. Alice Smith", 0));
      await after(t, () => s.press("enter"), greet("Dr. Alice Smith"));
      // Ctrl-U deletes before the cursor; UTF-8 and wide characters.
      s.write("junkKeep");
      ["left", "left", "left", "left"].forEach((k) => s.press(k));
      await after(t, () => s.press("ctrl-u"), promptLine("Keep", 4));
      await after(t, () => s.press("enter"), greet("Keep"));
      s.write("garbage");
      s.press("ctrl-u");
      await after(t, () => s.write("Zoë"), promptLine("Zoë", 0));
      await after(t, () => s.press("enter"), greet("Zoë"));
      s.write("日本");
      await after(t, () => s.press("left"), promptLine("日本", 2));
      await after(t, () => s.press("enter"), greet("日本"));
      // Ctrl-D on a non-empty line deletes under the cursor; an empty line just prompts again.
      s.write("xab");
      s.press("home");
      await after(t, () => s.press("ctrl-d"), promptLine("ab", 2));
      await after(t, () => s.press("enter"), greet("ab"));
      const empty = await after(t, () => s.press("enter"), "\r\nname> ");
      assert.equal(empty, "\r\nname> ");
      await after(t, () => s.press("ctrl-d"), "\r\n");
      return await finish(t);
    });
    assert.equal(run.code, 0);
    const greetings = [...run.t.text.matchAll(/hello, ([^!]*)!/g)].map((m) => m[1]);
    assert.deepEqual(greetings, ["World", "Bob", "Dr. Alice Smith", "Keep", "Zoë", "日本", "ab"]);
  },
);

// --- pager.py ---

function pagerStatus(first: number, last: number, total = 100, name = "sample.txt"): string {
  return `${CSI}7m${name}: ${first}-${last}/${total} (q quit)${CSI}0m`;
}

function sampleLine(n: number): string {
  return `line ${String(n).padStart(3, "0")} of 100: `;
}

fixtureTest("pager.py: pages, lines, top/end and resize move the status line range; q exits 0", async () => {
  const run = await twice(async () => {
    const t = launch("pager.py", [`${FIXTURES_DIR}/sample.txt`]);
    const page = (act: () => void, first: number, last: number) => after(t, act, pagerStatus(first, last));
    const key = (name: string) => () => t.session.press(name);
    await t.output(pagerStatus(1, 23));
    assert.ok(t.text.includes(sampleLine(1)) && t.text.includes(sampleLine(23)));
    assert.ok(!t.text.includes(sampleLine(24)));
    await page(key("space"), 24, 46);
    await page(key("pgdn"), 47, 69);
    await page(key("j"), 48, 70);
    await page(key("down"), 49, 71);
    await page(key("k"), 48, 70);
    await page(key("up"), 47, 69);
    await page(key("b"), 24, 46);
    await page(key("pgup"), 1, 23);
    await page(key("b"), 1, 23); // Already at the top.
    const end = await page(key("G"), 78, 100);
    assert.ok(end.includes(sampleLine(78)) && end.includes(`${sampleLine(100)}bravo delta hotel\r\n`));
    assert.ok(!end.includes(sampleLine(77)));
    await page(key("space"), 78, 100); // Already at the end.
    await page(key("g"), 1, 23);
    await page(key("end"), 78, 100);
    await page(key("home"), 1, 23);
    const small = await page(() => t.session.resize(80, 11), 1, 10);
    assert.ok(small.includes(sampleLine(10)) && !small.includes(sampleLine(11)));
    await page(key("space"), 11, 20);
    await page(() => t.session.resize(60, 30), 11, 39);
    await after(t, key("q"), `\r${CSI}K`);
    return await finish(t);
  });
  assert.equal(run.code, 0);
  assert.ok(run.t.text.startsWith(`${CSI}H${CSI}2J${sampleLine(1)}charlie golf oscar\r\n`));
});

fixtureTest("pager.py: an empty file shows `~` rows; a missing file or no argument exits 2", async () => {
  const empty = await twice(async () => {
    const t = launch("pager.py", ["/dev/null"], 40, 5);
    await t.output(pagerStatus(0, 0, 0, "null"));
    t.session.press("q");
    return await finish(t);
  });
  assert.equal(empty.code, 0);
  assert.ok(empty.t.text.startsWith(`${CSI}H${CSI}2J~\r\n~\r\n~\r\n~\r\n${pagerStatus(0, 0, 0, "null")}`));

  const missing = await twice(async () => await finish(launch("pager.py", [`${FIXTURES_DIR}/missing.txt`])));
  assert.equal(missing.code, 2);
  assert.ok(missing.t.text.includes(`pager.py: ${FIXTURES_DIR}/missing.txt: No such file or directory`));
  const usage = await twice(async () => await finish(launch("pager.py")));
  assert.equal(usage.code, 2);
  assert.ok(usage.t.text.includes("usage: pager.py FILE"));
});

// --- the files themselves ---

Deno.test("fixtures are executable python3 scripts with a header, world-readable, sharing _tui.py", async () => {
  const shared = await Deno.readTextFile(`${FIXTURES_DIR}/_tui.py`);
  assert.ok(
    ((await Deno.stat(`${FIXTURES_DIR}/_tui.py`)).mode! & 0o444) === 0o444,
    "_tui.py is world-readable",
  );
  assert.doesNotMatch(
    shared,
    /\bimport (time|random|datetime|curses)\b|os\.environ/,
    "_tui.py: deterministic",
  );
  for (const name of FIXTURES) {
    const path = `${FIXTURES_DIR}/${name}`;
    const text = await Deno.readTextFile(path);
    assert.ok(text.startsWith(`#!/usr/bin/python3\n"""${name}`), `${name}: shebang and header comment`);
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o755, `${name}: mode 755`);
    assert.match(text, /^from _tui import \*/m, `${name}: uses the shared helpers`);
    assert.doesNotMatch(
      text,
      /\bimport (time|random|datetime|curses)\b|os\.environ/,
      `${name}: deterministic`,
    );
  }
  assert.ok(((await Deno.stat(`${FIXTURES_DIR}/sample.txt`)).mode! & 0o444) === 0o444);
  const sample = (await Deno.readTextFile(`${FIXTURES_DIR}/sample.txt`)).split("\n");
  assert.equal(sample.length, 101);
  assert.ok(sample[99]!.startsWith(sampleLine(100)));
});
