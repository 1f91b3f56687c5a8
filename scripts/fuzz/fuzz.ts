/**
 * `deno task fuzz`: fuzzes every parser of untrusted input in-process (see targets.ts).
 *
 *   deno task fuzz [--seed N] [--cases N] [--from I] [--target NAME]… [--time-limit DUR] [--case-ms N]
 *   deno task fuzz --seed N --target NAME --case I
 *
 * - `--seed` (default 1) and the case index determine each input: a failure prints both, and
 *   `--seed S --target T --case I` replays that one case and prints its whole input.
 * - `--cases` per target (default 10000), from case `--from` (default 0: shards of one run can go to
 *   several processes); `--time-limit` for the whole run (`90s`, `10m`, `2h`; default
 *   none) stops starting cases when it is reached (the report says how many ran).
 * - Cases run on a worker in batches; a case that does not return within `--case-ms` × 10 (at least 10 s)
 *   of running time is a hang: the worker is terminated and the run goes on after it (time while the
 *   process was stopped does not count). A case that used more than `--case-ms` (default 2000) of CPU is
 *   reported as a hang too: CPU, not the wall, so a busy or stopped machine does not fail a case.
 *
 * Prints each crash and hang with its repro as it is found, a progress line every 20,000 cases, and
 * per-target counts at the end; exits 1 on any crash or hang.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { caseInput, type Failure, runCases, targetNamed, type TargetReport } from "./run.ts";
import { TARGETS } from "./targets.ts";
import { removeScratch } from "./targets_files.ts";

const BATCH = 2000;
/** Cases between two progress lines. */
const PROGRESS_EVERY = 20_000;

function duration(text: string): number {
  const match = /^(\d+)(ms|s|m|h)$/.exec(text);
  if (match === null) throw new Error(`--time-limit must look like 90s, 10m or 2h, got "${text}"`);
  return Number(match[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] as "ms" | "s" | "m" | "h"];
}

/** Runs `count` cases of `target` on workers, restarting after a case that never returns. */
async function fuzzTarget(
  name: string,
  seed: number,
  first: number,
  count: number,
  caseMs: number,
  deadline: number,
): Promise<TargetReport> {
  const total: TargetReport = { target: name, cases: 0, failures: [], ms: 0 };
  const started = performance.now();
  const end = first + count;
  let next = first;
  // One worker runs batch after batch (loading the parsers once); only a hang or a crash of the worker
  // costs a new one.
  let worker: Worker | null = null;
  let noted = first;
  let reported = 0;
  while (next < end && performance.now() < deadline) {
    const from = next;
    const batch = Math.min(BATCH, end - from);
    const progress = new SharedArrayBuffer(4);
    const cursor = new Int32Array(progress);
    Atomics.store(cursor, 0, from);
    const current: Worker = worker ??
      new Worker(new URL("./_worker.ts", import.meta.url), { type: "module" });
    worker = current;
    const outcome = await new Promise<TargetReport | { hung: number }>((resolve) => {
      let last = from;
      let since = performance.now();
      const stallMs = Math.max(10_000, caseMs * 10);
      let tick = performance.now();
      const watch = setInterval(() => {
        const now = Atomics.load(cursor, 0);
        const at = performance.now();
        // A tick that comes seconds late means this process was stopped (SIGSTOP, a suspended laptop): the
        // case had no time to run, so its stall is counted from now.
        if (at - tick > 2_000) since = at;
        tick = at;
        if (now !== last) {
          last = now;
          since = performance.now();
        } else if (performance.now() - since > stallMs) {
          clearInterval(watch);
          resolve({ hung: now });
        }
      }, 100);
      current.onmessage = (event: MessageEvent<TargetReport>) => {
        clearInterval(watch);
        resolve(event.data);
      };
      current.onerror = (event) => {
        event.preventDefault();
        clearInterval(watch);
        resolve({ hung: -1 - Atomics.load(cursor, 0) });
      };
      current.postMessage({
        target: name,
        seed,
        from,
        count: batch,
        caseMs,
        remainingMs: Math.max(0, deadline - performance.now()),
        progress,
      });
    });
    if ("hung" in outcome) {
      current.terminate();
      worker = null;
      const dead = outcome.hung < 0;
      const index = dead ? -1 - outcome.hung : outcome.hung;
      total.failures.push({
        target: name,
        index,
        kind: dead ? "crash" : "hang",
        message: dead ? "The worker died (uncaught error)" : "The case never returned",
        input: caseInput(targetNamed(name), seed, index).slice(0, 2000),
      });
      total.cases += index - from + 1;
      next = index + 1;
    } else {
      total.cases += outcome.cases;
      total.failures.push(...outcome.failures);
      next = from + outcome.cases;
      if (outcome.cases < batch) break; // The deadline.
    }
    // A line now and then, and each failure at once: a run killed before its end (a session that ended, a
    // machine that went down) still says which cases ran and what they found.
    for (const failure of total.failures.slice(reported)) printFailure(failure, seed);
    reported = total.failures.length;
    if (next - noted >= PROGRESS_EVERY) {
      noted = next;
      const seconds = ((performance.now() - started) / 1000).toFixed(0);
      console.log(`  ${name}: cases ${first}…${next - 1} ran, ${reported} failures (${seconds} s)`);
    }
  }
  worker?.terminate();
  total.ms = performance.now() - started;
  return total;
}

function printFailure(failure: Failure, seed: number): void {
  console.log(`  ${failure.kind.toUpperCase()} case ${failure.index}: ${failure.message}`);
  console.log(`    repro: deno task fuzz --seed ${seed} --target ${failure.target} --case ${failure.index}`);
  console.log(`    input: ${JSON.stringify(failure.input.slice(0, 300))}`);
}

async function main(): Promise<number> {
  const { values: args } = parseArgs({
    args: Deno.args,
    strict: true,
    options: {
      seed: { type: "string" },
      cases: { type: "string" },
      target: { type: "string", multiple: true },
      "time-limit": { type: "string" },
      "case-ms": { type: "string" },
      case: { type: "string" },
      from: { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (args.help) {
    console.log(
      "deno task fuzz [--seed N] [--cases N] [--from I] [--target NAME]… [--time-limit DUR] [--case-ms N] [--case I]",
    );
    for (const t of TARGETS) console.log(`  ${t.name.padEnd(14)} ${t.about}`);
    return 0;
  }
  const seed = Number(args.seed ?? 1) >>> 0;
  const cases = Number(args.cases ?? 10_000);
  const caseMs = Number(args["case-ms"] ?? 2000);
  const first = Number(args.from ?? 0);
  const names = args.target?.length ? args.target : TARGETS.map((t) => t.name);
  names.forEach(targetNamed);
  if (args.case !== undefined) {
    // Replay one case in this thread, with its whole input.
    const index = Number(args.case);
    const target = targetNamed(names[0]!);
    console.log(JSON.stringify(caseInput(target, seed, index)));
    const report = await runCases(target, { seed, from: index, count: 1, caseMs, deadline: Infinity });
    for (const f of report.failures) printFailure(f, seed);
    if (report.failures.length === 0) console.log(`case ${index}: passed`);
    return report.failures.length > 0 ? 1 : 0;
  }
  const deadline = args["time-limit"] === undefined
    ? Infinity
    : performance.now() + duration(args["time-limit"]);
  let failed = 0;
  console.log(
    `fuzz: seed ${seed}, cases ${first}…${first + cases - 1} of each target, case bound ${caseMs} ms`,
  );
  for (const name of names) {
    const report = await fuzzTarget(name, seed, first, cases, caseMs, deadline);
    const crashes = report.failures.filter((f) => f.kind === "crash").length;
    const hangs = report.failures.length - crashes;
    const rate = report.cases / Math.max(0.001, report.ms / 1000);
    console.log(
      `${name.padEnd(14)} ${String(report.cases).padStart(10)} cases  ${
        String(crashes).padStart(3)
      } crashes  ` +
        `${String(hangs).padStart(3)} hangs  ${(report.ms / 1000).toFixed(1)} s (${Math.round(rate)}/s)`,
    );
    failed += report.failures.length;
  }
  return failed > 0 ? 1 : 0;
}

if (import.meta.main) {
  const status = await main();
  removeScratch();
  Deno.exit(status);
}
