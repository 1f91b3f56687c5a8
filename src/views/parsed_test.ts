import assert from "node:assert/strict";
import { ParsedView } from "./parsed.ts";
import { CompactView } from "./compact.ts";

const sanitizeOps = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "parsed: a line-oriented program reads as in the compact view",
  ...sanitizeOps,
  fn: async () => {
    const input = "\x1b[32mok\x1b[0m 1\r\nprogress 10%\rprogress 100%\r\nwarn\r\nwarn\r\n";
    const parsed = await ParsedView.create();
    parsed.push(input);
    const compact = new CompactView();
    compact.push(input);
    assert.deepEqual(await parsed.end(), compact.end());
  },
});

Deno.test({
  name: "parsed: a full-screen program is its screen once, then only the rows that changed",
  ...sanitizeOps,
  fn: async () => {
    const view = await ParsedView.create({ cols: 40, rows: 6 });
    // Times on the flush clock (seconds): each flush comes once the program has been quiet a while.
    view.push("before\r\n", 0);
    view.push("\x1b[?1049h\x1b[H\x1b[2JTasks: 3 total\r\nCPU: 10%\r\n  PID USER\r\n    1 root", 0);
    assert.deepEqual(await view.flush({ partial: true, now: 0.3 }), [
      { type: "text", data: "before\n" },
      { type: "screen", rows: ["Tasks: 3 total", "CPU: 10%", "  PID USER", "    1 root"], alternate: true },
    ]);
    view.push("\x1b[2;1HCPU: 55%\x1b[K", 0.7);
    // Changing on its own: not reported again within 2 s, then only the changed row.
    assert.deepEqual(await view.flush({ partial: true, now: 1 }), []);
    view.push("\x1b[2;1HCPU: 60%\x1b[K", 2.2);
    const row = (text: string) => [{ type: "rows", rows: [{ row: 2, text }] }];
    assert.deepEqual(await view.flush({ partial: true, now: 2.5 }), row("CPU: 60%"));
    assert.deepEqual(await view.flush({ partial: true, now: 5 }), []); // Nothing changed.
    view.push("\x1b[2;1HCPU: 70%\x1b[K", 5);
    view.input(); // After input the screen is reported at once.
    assert.deepEqual(await view.flush({ partial: true, now: 5.1 }), row("CPU: 70%"));
    view.push("\x1b[?1049l");
    view.push("after\r\n");
    assert.deepEqual(await view.end(), [{ type: "text", data: "after\n" }]);
  },
});

Deno.test({
  name: "parsed: a pager's prompt on the last row is a prompt, not content",
  ...sanitizeOps,
  fn: async () => {
    const view = await ParsedView.create({ cols: 30, rows: 4 });
    view.push("\x1b[?1049h\x1b[Hline 1\r\nline 2\r\nline 3\r\n\x1b[7m:\x1b[27m");
    assert.deepEqual(await view.flush({ partial: true }), [
      { type: "screen", rows: ["line 1", "line 2", "line 3"], alternate: true },
      { type: "prompt", kind: "pager", text: ":" },
    ]);
    view.push("\r\x1b[K\x1b[H\x1b[2Jline 4\r\nline 5\r\n\r\n\x1b[7m(END)\x1b[27m");
    const events = await view.flush({ partial: true });
    assert.deepEqual(events.at(-1), { type: "prompt", kind: "pager", text: "(END)" });
    await view.end();
  },
});

Deno.test({
  name: "parsed: the first screen is the one drawn, not a blank one, and one caught mid-draw is not paced",
  ...sanitizeOps,
  fn: async () => {
    const view = await ParsedView.create({ cols: 40, rows: 6 });
    view.push("\x1b[?1h\x1b=\x1b[H\x1b[2J", 0); // Cleared, nothing drawn yet (top computing its first frame).
    assert.deepEqual(await view.flush({ partial: true, now: 0.3 }), []);
    view.push("top - 10:00:00 load average: 0.10\r\nTasks: 3 total", 0.4);
    // Caught 50 ms after output: reported, but the program may still be drawing.
    assert.deepEqual(await view.flush({ partial: true, now: 0.45 }), [
      { type: "screen", rows: ["top - 10:00:00 load average: 0.10", "Tasks: 3 total"], alternate: false },
    ]);
    view.push("\r\n  PID USER", 0.5);
    // So the rest is reported at once, not 2 s later; from then on the screen is paced.
    assert.deepEqual(await view.flush({ partial: true, now: 0.8 }), [
      { type: "rows", rows: [{ row: 3, text: "  PID USER" }] },
    ]);
    view.push("\x1b[3;1H  PID USER COMMAND", 1);
    assert.deepEqual(await view.flush({ partial: true, now: 1.3 }), []);
    await view.end();
  },
});

Deno.test({
  name: "parsed: rows of the first screen that scrolled off before it was reported come first, as text",
  ...sanitizeOps,
  fn: async () => {
    const view = await ParsedView.create({ cols: 40, rows: 4 });
    view.push("$ top -n 1\r\n", 0);
    // As `top -n 1` does: draws its one screen, then ends with a newline on the last row (which scrolls the
    // header off the top), with no pause in between for a report.
    view.push("\x1b[H\x1b[2Jtop - load average: 0.10\r\nTasks: 3 total\r\nCPU: 10%\r\n  PID USER", 0);
    view.push("\x1b[5;1H\r\n", 0);
    assert.deepEqual(await view.end(), [
      { type: "text", data: "$ top -n 1\n" },
      { type: "text", data: "top - load average: 0.10\n" },
      { type: "screen", rows: ["Tasks: 3 total", "CPU: 10%", "  PID USER"], alternate: false },
    ]);
  },
});
