/**
 * The clock always wins over the terminal model: a program that prints, forever, the costliest output
 * we know of for xterm (huge repeat counts, line inserts, resets, screen switches, giant parameter lists
 * and payloads, combining runs, invalid UTF-8) under `screen: true` still ends at its `--timeout`, a
 * snapshot asked for during the flood comes back promptly, and so does one after the exit. Before the
 * clamp, `CSI 2147483647 b` or `L` kept the event loop busy for minutes: no timer fired at all.
 */
import assert from "node:assert/strict";
import type { ExitFrame } from "../src/mod.ts";
import { runCli, sessionTest, spawnSession, withTempDir } from "./_helpers.ts";

const PYTHON = "/usr/bin/python3";
/** Writes bytes.fromhex(argv[1]) repeated, as fast as the terminal takes it, forever. */
const FLOOD = String.raw`
import os, sys
pat = bytes.fromhex(sys.argv[1])
chunk = pat * max(1, 65536 // len(pat))
while True:
    os.write(1, chunk)
`;

const E = "\x1b[";
const HUGE = "2147483647";
/** The worst patterns found (see the module documentation of src/terminal/clamp.ts for the costs). */
const PATTERNS: Record<string, string | Uint8Array> = {
  "REP": `a${E}${HUGE}b`,
  "REP of a wide character": `\u4e2d${E}${HUGE}b`,
  "IL": `${E}${HUGE}L`,
  "DL": `${E}${HUGE}M`,
  "SU": `${E}${HUGE}S`,
  "SD": `${E}${HUGE}T`,
  "CHT": `${E}${HUGE}I`,
  "CBT": `${E}${HUGE}Z`,
  "IL within margins": `${E}2;20r${E}5H${E}${HUGE}L`,
  "RIS": "\x1bc",
  "alternate screen on/off": `${E}?1049h${E}?1049l`,
  "ED": `${E}2J`,
  "DECALN": "\x1b#8",
  "RI at the top": `${E}H\x1bM`,
  "huge CUP/CUF/DECSTBM": `${E}${HUGE};${HUGE}H${E}${HUGE}C${E}1;${HUGE}r`,
  "huge ICH/DCH/ECH": `${E}${HUGE}@${E}${HUGE}P${E}${HUGE}X`,
  "parameter list": `${E}${"1;".repeat(5000)}m`,
  "sixel payload": `\x1bPq#0;2;0;0;0${"!2147483647~".repeat(500)}`,
  "OSC payload": `\x1b]0;${"x".repeat(60000)}`,
  "combining run": `e${"\u0301".repeat(3000)}`,
  "invalid UTF-8": new Uint8Array([0xff, 0xfe, 0xc3, 0x28, 0xe2, 0x82, 0xf0, 0x9f, 0x98]),
  "carriage returns": "\r",
  "no newline": "x",
};

function hex(pattern: string | Uint8Array): string {
  const bytes = typeof pattern === "string" ? new TextEncoder().encode(pattern) : pattern;
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

const TIMEOUT_MS = 1000;
/**
 * Slack for a loaded 2-core machine shared with other test runs: the timer, the kill, the reap, the last
 * slice parsed. Before the clamp these floods never ended at all (the event loop never came back).
 */
const MARGIN_MS = 4000;
/** How much later than a quiet session in the same process a flooded one may end. */
const RELATIVE_MS = 1500;

/** One flood: ends on time, answers a snapshot during the flood and after the exit promptly. */
async function flood(name: string, pattern: string | Uint8Array): Promise<number> {
  const session = spawnSession({
    argv: [PYTHON, "-c", FLOOD, hex(pattern)],
    screen: true,
    timeoutMs: TIMEOUT_MS,
    idleMs: 0,
    sandbox: { mode: "none", acknowledge: "unsafe-no-sandbox" },
  });
  // Frames are read (and dropped) as a consumer would: reading must not stall on them.
  const drained = (async () => {
    for await (const _ of session.frames()) { /* only the exit matters */ }
  })();
  await new Promise((resolve) => setTimeout(resolve, 400));
  let asked = performance.now();
  const during = await session.screen();
  const duringMs = performance.now() - asked;
  const exit: ExitFrame = await session.exited;
  await drained;
  asked = performance.now();
  const after = await session.screen();
  const afterMs = performance.now() - asked;
  assert.equal(exit.timed_out, true, name);
  assert.ok(exit.duration_ms < TIMEOUT_MS + MARGIN_MS, `${name}: exit after ${exit.duration_ms} ms`);
  // The backlog the model may hold is bounded in parsing time, not only in characters.
  assert.ok(duringMs < MARGIN_MS, `${name}: a snapshot during the flood took ${Math.round(duringMs)} ms`);
  assert.ok(afterMs < 1000, `${name}: a snapshot after the exit took ${Math.round(afterMs)} ms`);
  assert.equal(during.cols, 80);
  assert.equal(after.rows, 24);
  return exit.duration_ms;
}

/** A quiet session with the same timeout, in the same process: what "on time" means under this load. */
async function quiet(): Promise<number> {
  const session = spawnSession({
    argv: ["sleep", "30"],
    screen: true,
    timeoutMs: TIMEOUT_MS,
    idleMs: 0,
    sandbox: { mode: "none", acknowledge: "unsafe-no-sandbox" },
  });
  const drained = (async () => {
    for await (const _ of session.frames()) { /* only the exit matters */ }
  })();
  const exit = await session.exited;
  await drained;
  return exit.duration_ms;
}

const names = Object.keys(PATTERNS);
for (let at = 0; at < names.length; at += 4) {
  const group = names.slice(at, at + 4);
  sessionTest(`the clock wins over a terminal model flooded with ${group.join(", ")}`, async () => {
    // Side by side: one event loop, so any flood that blocks it would make every timeout late.
    const [control, ...floods] = await Promise.all([
      quiet(),
      ...group.map((name) => flood(name, PATTERNS[name]!)),
    ]);
    floods.forEach((ms, i) => {
      assert.ok(
        ms < control! + RELATIVE_MS,
        `${group[i]}: exit after ${ms} ms, a quiet session's after ${control}`,
      );
    });
  }, 60_000);
}

sessionTest(
  "specter run --timeout ends on time with a snapshot asked for during a REP + IL + RIS flood",
  async () => {
    const started = performance.now();
    const { code, frames } = await runCli(
      [
        "run",
        "--timeout",
        `${TIMEOUT_MS}ms`,
        "--unsafe-no-sandbox",
        "--ack-no-network-enforcement",
        "--",
        PYTHON,
        "-c",
        FLOOD,
        hex(`a${E}${HUGE}b${E}${HUGE}L\x1bc`),
      ],
      JSON.stringify({ v: 1, type: "snapshot", name: "flood" }) + "\n",
    );
    const elapsed = performance.now() - started;
    assert.equal(code, 124);
    const exit = frames.find((f) => f.type === "exit")!;
    assert.equal(exit.timed_out, true);
    assert.ok((exit.duration_ms as number) < TIMEOUT_MS + MARGIN_MS, `exit after ${exit.duration_ms} ms`);
    assert.ok(frames.some((f) => f.type === "snapshot" && f.name === "flood"));
    assert.ok(elapsed < 20_000, `the CLI took ${Math.round(elapsed)} ms`);
  },
  60_000,
);

sessionTest("a scenario step times out on time while the program floods its screen", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(
      `${dir}/s.yaml`,
      [
        "version: 1",
        "name: flood",
        "run:",
        `  argv: [/bin/sh, -c, "while :; do printf 'a\\\\033[${HUGE}b\\\\033[${HUGE}L\\\\033c'; done"]`,
        "  policy: basic",
        "steps:",
        '  - wait_for: { text: "never printed" }',
        "    timeout_ms: 1000",
        "",
      ].join("\n"),
    );
    const started = performance.now();
    const { code, stdout } = await runCli(["test", "--json", "--artifacts", `${dir}/a`, `${dir}/s.yaml`]);
    const elapsed = performance.now() - started;
    const result = JSON.parse(stdout) as { status: string; steps: { status: string; duration_ms: number }[] };
    assert.equal(code, 1);
    assert.equal(result.status, "Failed");
    assert.equal(result.steps[0]!.status, "failed");
    assert.ok(
      result.steps[0]!.duration_ms < 1000 + MARGIN_MS,
      `the step took ${result.steps[0]!.duration_ms}`,
    );
    // The program's last output gets a bounded time in the model (2 s) after it is terminated.
    assert.ok(elapsed < 15_000, `the whole run took ${Math.round(elapsed)} ms`);
  });
}, 60_000);
