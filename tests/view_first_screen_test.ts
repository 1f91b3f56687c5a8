/**
 * The parsed view's first screen of real full-screen programs (issue 24): the screen the program drew once
 * it settled, not a report taken before it drew. `top` (its header: load average, task counts), `top` after
 * a `clear` and a pause (the blank screen is not the first screen), `top -n 1` (it draws once and scrolls
 * its header off with its last newline, with no pause for a report), `vim` and `less`.
 */
import assert from "node:assert/strict";
import { viewFrames } from "../src/agent/mod.ts";
import { feedView } from "../src/agent/mod.ts";
import type { Frame, ViewEvent } from "../src/protocol/mod.ts";
import { ParsedView, renderText, screenOf } from "../src/views/mod.ts";
import { NO_SANDBOX, spawnSession, withTempDir, withTimeout } from "./_helpers.ts";

const sanitize = { sanitizeOps: false, sanitizeResources: false };

/**
 * Streams `argv`'s parsed view (as a subscriber reads it: flushed after every batch of frames and at each
 * idle frame) until its first `screen` event and the first pause after it (an idle frame: the program
 * settled), then types `quit` and reads to the end. Returns the view events up to that pause.
 */
async function firstScreen(
  argv: string[],
  quit: string,
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<ViewEvent[]> {
  const session = spawnSession({ argv, cols: 100, rows: 30, sandbox: NO_SANDBOX, ...options });
  const events: ViewEvent[] = [];
  let quitSent = false;
  await withTimeout(
    (async () => {
      for await (const frame of viewFrames(session.subscribe({ from: 0 }), "parsed")) {
        if (quitSent) continue; // Drained to the end, so the program is gone when the test ends.
        if (frame.type === "idle" && events.some((e) => e.type === "screen")) {
          quitSent = true;
          session.write(quit);
        }
        if (!["text", "screen", "rows", "line_update", "prompt"].includes(frame.type)) continue;
        events.push(frame as ViewEvent);
      }
    })(),
    20_000,
    `${argv.join(" ")}: its first screen and its end`,
  );
  return events;
}

/**
 * The screen as a reader holds it once the program settled: the first `screen` event and the diffs after
 * it. A first screen caught mid-draw (the program's output split across reads on a busy machine) is
 * completed by a diff at once, not 2 s later.
 */
function settledRows(events: readonly ViewEvent[]): readonly string[] {
  const screen = screenOf(events);
  assert.ok(screen !== null, "no screen reported");
  return screen;
}

/** The rows of the first `screen` event of `events`. */
function rowsOf(events: readonly ViewEvent[]): readonly string[] {
  const screen = events.find((e) => e.type === "screen");
  assert.ok(screen?.type === "screen", "no screen reported");
  return screen.rows;
}

Deno.test({
  name: "first screen: top's first screen has its header (load average, tasks)",
  ...sanitize,
  fn: async () => {
    const rows = rowsOf(await firstScreen(["top", "-d", "5"], "q"));
    assert.match(rows[0] ?? "", /^top - .*load average/, rows.join("\n"));
    assert.ok(rows.some((row) => /^Tasks:/.test(row)), rows.join("\n"));
    assert.ok(rows.some((row) => /PID\s+USER/.test(row)), rows.join("\n"));
  },
});

Deno.test({
  name: "first screen: top after a clear and a pause: the blank screen is not reported as its first screen",
  ...sanitize,
  fn: async () => {
    // `clear` makes the screen full-screen and blank; top draws 0.6 s later, well after an idle flush.
    const rows = rowsOf(await firstScreen(["sh", "-c", "clear; sleep 0.6; exec top -d 5"], "q"));
    assert.match(rows[0] ?? "", /^top - .*load average/, rows.join("\n"));
    assert.ok(rows.some((row) => /^Tasks:/.test(row)), rows.join("\n"));
  },
});

Deno.test({
  name: "first screen: top -n 1 read after it ended keeps the header its last newline scrolled away",
  ...sanitize,
  fn: async () => {
    // Three runs: the output's split into frames (and the model's parsing) varies from run to run.
    for (let run = 0; run < 3; run++) {
      const session = spawnSession({ argv: ["top", "-n", "1"], cols: 100, rows: 30, sandbox: NO_SANDBOX });
      const subscription = session.subscribe({ from: 0 });
      const frames: Frame[] = [];
      await withTimeout(
        (async () => {
          for (;;) {
            const taken = await subscription.take();
            frames.push(...taken);
            if (taken.length === 0 || taken.some((f) => f.type === "exit")) break;
          }
        })(),
        20_000,
        "top -n 1",
      );
      subscription.close();
      // As the agent reads a session that has ended: every frame, then the view's end.
      const view = await ParsedView.create({ cols: 100, rows: 30 });
      for (const frame of frames) feedView(view, frame);
      const events = await view.end();
      const text = renderText(events);
      const header = text.split("\n").findIndex((line) => /^top - .*load average/.test(line));
      const tasks = text.split("\n").findIndex((line) => /^Tasks:/.test(line));
      assert.ok(header >= 0 && header < tasks, `run ${run}:\n${text}`);
    }
  },
});

Deno.test({
  name: "first screen: vim's first screen shows the file and its name",
  ...sanitize,
  fn: () =>
    withTempDir(async (dir) => {
      await Deno.writeTextFile(`${dir}/notes.txt`, "first line of the notes\nsecond line\n");
      const events = await firstScreen(["vim", "-n", "-u", "NONE", "notes.txt"], "\x1b:q!\r", {
        cwd: dir,
        env: { HOME: dir },
      });
      assert.ok(rowsOf(events).some((row) => row !== ""), "the first screen is not blank");
      const rows = settledRows(events);
      assert.equal(rows[0], "first line of the notes", rows.join("\n"));
      assert.equal(rows[1], "second line");
      assert.ok(rows.some((row) => row.includes('"notes.txt"')), rows.join("\n"));
    }),
});

Deno.test({
  name: "first screen: less's first screen is the file's first page",
  ...sanitize,
  fn: () =>
    withTempDir(async (dir) => {
      const lines = Array.from({ length: 100 }, (_, i) => `entry ${i + 1}: value ${i * 7}`);
      await Deno.writeTextFile(`${dir}/long.conf`, lines.join("\n") + "\n");
      const events = await firstScreen(["less", "long.conf"], "q", { cwd: dir, env: { LESSHISTFILE: "-" } });
      assert.ok(rowsOf(events).some((row) => row !== ""), "the first screen is not blank");
      const rows = settledRows(events);
      assert.deepEqual(rows.slice(0, 29), lines.slice(0, 29), rows.join("\n"));
    }),
});
