import assert from "node:assert/strict";
import { PROMPT_MARK, type QuietEvent, type QuietOptions, QuietWatch } from "./quiet_watch.ts";

/** A fake clock: `advance` runs every callback that falls due, in order. */
function host(line = "") {
  let now = 0;
  const timers: { at: number; fn: () => void }[] = [];
  const events: QuietEvent[] = [];
  const state = { line };
  return {
    events,
    state,
    host: {
      now: () => now,
      later: (ms: number, fn: () => void) => void timers.push({ at: now + ms, fn }),
      currentLine: () => state.line,
      emit: (e: QuietEvent) => void events.push(e),
    },
    advance(ms: number) {
      const end = now + ms;
      for (;;) {
        timers.sort((a, b) => a.at - b.at);
        const next = timers[0];
        if (next === undefined || next.at > end) break;
        timers.shift();
        now = next.at;
        next.fn();
      }
      now = end;
    },
  };
}

const OPTIONS: QuietOptions = { idleMs: 500, promptSettleMs: 100, promptRegex: [/\$ $/] };

Deno.test("idle is reported once after quiet, also before any output, and again after new output", () => {
  const h = host();
  const watch = new QuietWatch(OPTIONS, h.host);
  h.advance(499);
  assert.deepEqual(h.events, []);
  h.advance(1);
  assert.deepEqual(h.events, [{ type: "idle", dur_ms: 500 }]);
  h.advance(5000);
  assert.equal(h.events.length, 1);
  watch.output();
  h.advance(600);
  assert.deepEqual(h.events.at(-1), { type: "idle", dur_ms: 500 });
});

Deno.test("a prompt is reported when the current line matches after the settle time", () => {
  const h = host("user@host:~$ ");
  const watch = new QuietWatch(OPTIONS, h.host);
  watch.output();
  h.advance(100);
  assert.deepEqual(h.events, [{ type: "prompt", regex: "\\$ $", line: "user@host:~$ " }]);
  h.state.line = "working...";
  watch.output();
  h.advance(100);
  assert.equal(h.events.length, 1); // No match: no prompt.
});

Deno.test("output keeps pushing the reports back; stop ends them", () => {
  const h = host("$ ");
  const watch = new QuietWatch(OPTIONS, h.host);
  for (let i = 0; i < 10; i++) {
    h.advance(90);
    watch.output();
  }
  assert.deepEqual(h.events, []);
  watch.stop();
  h.advance(10_000);
  assert.deepEqual(h.events, []);
});

Deno.test("idleMs 0 and no prompt patterns report nothing", () => {
  const h = host("$ ");
  const watch = new QuietWatch({ idleMs: 0, promptSettleMs: 100, promptRegex: [] }, h.host);
  watch.output();
  h.advance(10_000);
  assert.deepEqual(h.events, []);
});

Deno.test("a shell's prompt mark makes the settled line a prompt, whatever it reads, once per mark", () => {
  const h = host("z> ");
  const watch = new QuietWatch({ idleMs: 0, promptSettleMs: 100, promptRegex: [] }, h.host);
  watch.promptMark();
  watch.output(); // The prompt's own text, after the mark: still reported, from its settle.
  h.advance(99);
  assert.deepEqual(h.events, []);
  h.advance(1);
  assert.deepEqual(h.events, [{ type: "prompt", regex: PROMPT_MARK, line: "z> " }]);
  watch.output(); // Typing at the prompt: no mark, no pattern, no prompt.
  h.advance(500);
  assert.equal(h.events.length, 1);
});

Deno.test("input cancels a marked prompt not reported yet: it would arrive as if the input led to it", () => {
  const h = host("$ ");
  const watch = new QuietWatch({ idleMs: 0, promptSettleMs: 100, promptRegex: [] }, h.host);
  watch.promptMark();
  h.advance(50);
  watch.input();
  h.advance(500);
  assert.deepEqual(h.events, []);
  watch.promptMark(); // The next prompt is reported again.
  h.advance(100);
  assert.deepEqual(h.events, [{ type: "prompt", regex: PROMPT_MARK, line: "$ " }]);
});
