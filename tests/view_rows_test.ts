/**
 * The compact view of real full-screen output (issue 24): a row `top` redraws as it was is not sent again,
 * and output drawn again after a `clear` is.
 */
import assert from "node:assert/strict";
import { viewFrames } from "../src/agent/mod.ts";
import { renderText } from "../src/views/mod.ts";
import type { ViewEvent } from "../src/protocol/mod.ts";
import { NO_SANDBOX, spawnSession, withTimeout } from "./_helpers.ts";

const sanitize = { sanitizeOps: false, sanitizeResources: false };

/** The compact text of `argv`, streamed as a subscriber reads it; `quit` is typed after `quitAfterMs`. */
async function compactText(argv: string[], quit?: { text: string; afterMs: number }): Promise<string> {
  const session = spawnSession({ argv, cols: 100, rows: 30, sandbox: NO_SANDBOX });
  const timer = quit ? setTimeout(() => session.write(quit.text), quit.afterMs) : undefined;
  const events: ViewEvent[] = [];
  try {
    await withTimeout(
      (async () => {
        for await (const frame of viewFrames(session.subscribe({ from: 0 }), "compact")) {
          if (["text", "line_update", "prompt"].includes(frame.type)) events.push(frame as ViewEvent);
        }
      })(),
      20_000,
      argv.join(" "),
    );
  } finally {
    clearTimeout(timer);
  }
  return renderText(events);
}

Deno.test({
  name: "compact rows: top refreshing for 2 s sends its column header once",
  ...sanitize,
  fn: async () => {
    const text = await compactText(["top", "-d", "0.3"], { text: "q", afterMs: 2000 });
    const refreshes = text.split("\n").filter((line) => /^%Cpu\(s\):/.test(line)).length;
    assert.ok(refreshes >= 3, `${refreshes} refreshes seen:\n${text}`);
    // The header row never changes: drawn on every refresh, sent once.
    assert.equal(text.split("\n").filter((line) => /^\s*PID\s+USER/.test(line)).length, 1, text);
  },
});

Deno.test({
  name: "compact rows: the same output drawn again after a clear is sent again",
  ...sanitize,
  fn: async () => {
    const twice = "echo '$ make'; echo 'build ok'";
    const text = await compactText(["sh", "-c", `clear; ${twice}; sleep 0.5; clear; ${twice}`]);
    const lines = text.split("\n");
    assert.equal(lines.filter((line) => line === "$ make").length, 2, text);
    assert.equal(lines.filter((line) => line === "build ok").length, 2, text);
  },
});
