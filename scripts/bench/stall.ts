/**
 * Event-loop stall benchmark: how long the terminal model can hold the JS thread (during which no timer
 * fires: not `--timeout`, not a step's deadline) while it parses the costliest output we know of, against
 * plain text of the same estimated work measured in the same run.
 *
 * For each workload, a fresh 80x24 `TerminalModel` gets four writes of about 64 KiB each (one read's worth),
 * each in its own task and not awaited, as a session feeds it; a 1 ms interval timer records the longest gap between its ticks until
 * the model settled. Workloads: plain text (the baseline), `a CSI 2147483647 b CSI 2147483647 L ESC c`
 * (repeat, line insert and reset), `CSI 2147483647 L` alone, and RIS alone.
 *
 *   deno run -A scripts/bench/stall.ts [--rounds 5]
 *
 * Acceptance: each workload's median longest stall is at most 100 ms. Slices shrink with the output's
 * estimated work per character (`sliceLength(size, density)` in `src/terminal/model.ts`), so what is left
 * above plain text is mostly garbage collection of the buffers that resets and line inserts allocate.
 * Run it on a quiet machine.
 *
 * @module
 */
import { TerminalModel } from "../../src/terminal/mod.ts";
import { finish, intFlags, median, round, runBenchmark, say, table } from "./_common.ts";

/** The clock may be late because of parsing by at most this much (a tenth of a second). */
const ACCEPT_MS = 100;
const E = "\x1b[";
const HUGE = "2147483647";
const WORKLOADS: Record<string, string> = {
  "plain text": "0123456789".repeat(8) + "\r\n",
  "REP + IL + RIS": `a${E}${HUGE}b${E}${HUGE}L\x1bc`,
  "IL": `${E}${HUGE}L`,
  "RIS": "\x1bc",
};

/** The longest gap (ms) between 1 ms ticks while a fresh model parses four ~64 KiB writes of `pattern`. */
async function longestStall(pattern: string): Promise<number> {
  const model = await TerminalModel.create({ cols: 80, rows: 24 });
  const chunk = pattern.repeat(Math.max(1, Math.floor(65536 / pattern.length)));
  let last = performance.now();
  let longest = 0;
  const probe = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  try {
    // One write per task, as a session writes each read: the clamp's own pass over a write counts too.
    for (let i = 0; i < 4; i++) {
      model.write(chunk);
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    await model.settled();
    return Math.max(longest, performance.now() - last);
  } finally {
    clearInterval(probe);
    model.dispose();
  }
}

async function main(): Promise<number> {
  const flags = intFlags(Deno.args, { rounds: 5 });
  await longestStall("warm up\r\n"); // Loads xterm outside the measurement.
  const results: Record<string, number[]> = {};
  for (let r = 0; r < flags.rounds; r++) {
    for (const [name, pattern] of Object.entries(WORKLOADS)) {
      (results[name] ??= []).push(await longestStall(pattern));
    }
  }
  const baseline = median(results["plain text"]!);
  say(table([
    ["workload", "longest stall, ms (median)", "per round", "ratio to plain text"],
    ...Object.entries(results).map(([name, ms]) => [
      name,
      round(median(ms), 1).toString(),
      ms.map((m) => round(m, 1)).join(" "),
      round(median(ms) / baseline, 2).toString(),
    ]),
  ]));
  const failures = Object.entries(results)
    .filter(([, ms]) => !(median(ms) <= ACCEPT_MS))
    .map(([name, ms]) => `${name}: ${round(median(ms), 1)} ms > ${ACCEPT_MS} ms`);
  return finish({
    benchmark: "stall",
    date: new Date().toISOString(),
    rounds: flags.rounds,
    unit: "longest gap between 1 ms timer ticks while the model parses 4 x 64 KiB, ms",
    results: Object.fromEntries(
      Object.entries(results).map(([name, ms]) => [name, ms.map((m) => round(m, 1))]),
    ),
    baseline_ms: round(baseline, 1),
    acceptance: { stall_ms_max: ACCEPT_MS },
  }, failures);
}

if (import.meta.main) await runBenchmark("stall", main);
