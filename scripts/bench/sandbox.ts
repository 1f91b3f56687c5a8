/**
 * `deno task bench:sandbox`: spawn-to-first-byte of `echo hi` under Specter's full sandbox (bwrap with
 * the strict preset's binds and the seccomp filter) against bare bubblewrap started the same way (same
 * PTY spawn path, see `BARE_ARGS`, no filter), in the same process. Goal: ratio ≤ 1.2.
 *
 *   deno run -A scripts/bench/sandbox.ts [--runs 100] [--warmup 5] [--blocks 10]
 *
 * @module
 */
import { spawn } from "../../src/session/spawn_session.ts";
import type { SpawnOptions } from "../../src/session/options.ts";
import { loadPolicy } from "../../src/policy/mod.ts";
import { probeBwrap, rootLauncher } from "../../src/sandbox/probe.ts";
import { launcherArgs } from "../../src/sandbox/launch_plan.ts";
import { finish, intFlags, round, roundStats, runBenchmark, say, stats, table } from "./_common.ts";

const ACCEPT_RATIO = 1.2;

/**
 * The baseline: bubblewrap's conventional minimal sandbox (every namespace, the host root read-only,
 * /proc and /dev), started through the same PTY spawn path. What the ratio measures is what Specter's
 * policy layout (the deny-by-default binds, read-only root) and the seccomp filter add on top of it.
 */
const BARE_ARGS = [
  "--unshare-all",
  "--die-with-parent",
  "--ro-bind",
  "/",
  "/",
  "--proc",
  "/proc",
  "--dev",
  "/dev",
];

/** Milliseconds from just before spawn() to the first stdout frame; the session is then drained. */
async function firstByte(options: SpawnOptions): Promise<number> {
  const started = performance.now();
  const session = spawn({ idleMs: 0, ...options });
  let first = Number.NaN;
  for await (const frame of session.frames()) {
    if (frame.type === "stdout" && Number.isNaN(first)) first = performance.now() - started;
  }
  if (Number.isNaN(first)) throw new Error(`No output from ${options.argv.join(" ")}`);
  return first;
}

async function main(): Promise<number> {
  const flags = intFlags(Deno.args, { runs: 100, warmup: 5, blocks: 10 });
  const probe = probeBwrap();
  if (!probe.ok) throw new Error(`bubblewrap is not usable: ${probe.reason}`);
  const policy = loadPolicy("strict", {
    workspace: "/tmp",
    home: "/tmp",
    acks: { unsafeWrite: false, network: false },
  });
  const sandboxed: SpawnOptions = { argv: ["/usr/bin/echo", "hi"], sandbox: { mode: "bwrap", policy } };
  // "The same way" includes the launcher: started by root, Specter runs bwrap through setpriv (clearing
  // root's supplementary groups), so the bare baseline does too.
  const root = rootLauncher();
  const launcher = root.ok ? launcherArgs(root.launcher) : [];
  const bare: SpawnOptions = {
    argv: [...launcher, probe.path, ...BARE_ARGS, "--", "/usr/bin/echo", "hi"],
    sandbox: { mode: "none", acknowledge: "unsafe-no-sandbox" },
  };
  say(
    `sandbox: ${flags.runs} runs of echo hi per side in ${flags.blocks} alternating blocks (${probe.version})`,
  );
  for (let i = 0; i < flags.warmup; i++) {
    await firstByte(sandboxed);
    await firstByte(bare);
  }
  const times = { sandboxed: [] as number[], bare: [] as number[] };
  const perBlock = Math.ceil(flags.runs / flags.blocks);
  for (let block = 0; block < flags.blocks; block++) {
    const order = block % 2 === 0 ? (["sandboxed", "bare"] as const) : (["bare", "sandboxed"] as const);
    for (const side of order) {
      for (let i = 0; i < perBlock && times[side].length < flags.runs; i++) {
        times[side].push(await firstByte(side === "sandboxed" ? sandboxed : bare));
      }
    }
  }
  const s = roundStats(stats(times.sandboxed), 3);
  const b = roundStats(stats(times.bare), 3);
  const ratio = round(s.median / b.median, 3);
  say(table([
    ["side", "runs", "median ms", "p90 ms", "min ms", "max ms"],
    [
      "specter sandbox (bwrap+seccomp)",
      String(s.n),
      String(s.median),
      String(s.p90),
      String(s.min),
      String(s.max),
    ],
    ["bare bwrap", String(b.n), String(b.median), String(b.p90), String(b.min), String(b.max)],
  ]));
  say(`ratio specter sandbox / bare bwrap = ${ratio} (goal ≤ ${ACCEPT_RATIO})`);
  const failures = ratio <= ACCEPT_RATIO ? [] : [`ratio ${ratio} > ${ACCEPT_RATIO}`];
  return finish({
    benchmark: "sandbox",
    date: new Date().toISOString(),
    runs: flags.runs,
    unit: "ms from just before spawn() to the first stdout frame",
    specter: s,
    baseline: { name: `${launcher.length > 0 ? "setpriv … " : ""}bare bwrap ${BARE_ARGS.join(" ")}`, ...b },
    ratio,
    acceptance: { ratio_max: ACCEPT_RATIO },
    pass: failures.length === 0,
    failures,
  }, failures);
}

if (import.meta.main) await runBenchmark("sandbox", main);
