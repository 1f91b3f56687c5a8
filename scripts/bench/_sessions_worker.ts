/**
 * Child process of `sessions.ts`: holds N idle `sleep 1000` sessions in ONE process and measures it.
 *
 * Runs in its own Deno process so that its RSS contains nothing but the runtime, the library and the
 * sessions. Steps: baseline RSS with the library loaded (one `true` session run and finished, so libc,
 * the reactor and the child watcher exist) → spawn N sessions, consuming every frame → wait for every
 * `start` frame, settle → RSS/HWM → "no hang" probes while all N are live (timer latency, async file
 * read, input echo through one session's terminal) → terminate all, await every `exit` → look for
 * leftover `sleep` processes. Prints human lines, then one JSON line (last) for the parent.
 *
 *   deno run -A scripts/bench/_sessions_worker.ts [--sessions 1000] [--settle 1000] [--idle 30000]
 *
 * @module
 */
import { type Frame, type Session, spawn } from "../../src/mod.ts";
import { intFlags, procStatus, round, say, sleep } from "./_common.ts";

const PROBE = "specter-probe";
/** A probe slower than this counts as a hang. */
const HANG_MS = 1000;

/** One session and what its consumer saw. */
interface Held {
  readonly session: Session;
  /** Resolves at the `start` frame. */
  readonly started: Promise<void>;
  /** Resolves once the consumer saw the end of the frame stream. */
  done: Promise<void>;
  /** The last 4 KiB of output text. */
  output: string;
  /** Frames seen, by type. */
  readonly frames: Record<string, number>;
}

/** Every session started, so a crash can still end them (they would outlive us otherwise). */
const started: Session[] = [];

/** Starts a consumer for `session` that counts frames by type and keeps its output text. */
function hold(session: Session): Held {
  started.push(session);
  let markStarted!: () => void;
  const held: Held = {
    session,
    started: new Promise<void>((resolve) => markStarted = resolve),
    done: Promise.resolve(),
    output: "",
    frames: {},
  };
  held.done = (async () => {
    for await (const frame of session.frames()) count(held, frame, markStarted);
  })();
  return held;
}

function count(held: Held, frame: Frame, markStarted: () => void): void {
  held.frames[frame.type] = (held.frames[frame.type] ?? 0) + 1;
  if (frame.type === "start") markStarted();
  // A bounded tail: enough to find the probe's echo without holding unbounded text per session.
  if (frame.type === "stdout" && !frame.binary) held.output = (held.output + frame.data).slice(-4096);
}

/** Rejects (resolves to null) when `promise` takes longer than `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), ms));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Memory and resource figures of this process. */
function snapshot(): { rss_kib: number; hwm_kib: number; threads: number; fds: number } {
  return {
    rss_kib: procStatus("VmRSS"),
    hwm_kib: procStatus("VmHWM"),
    threads: procStatus("Threads"),
    fds: [...Deno.readDirSync("/proc/self/fd")].length,
  };
}

/** Pids of our children that are still around (sessions are our direct children). */
async function ourChildren(): Promise<number[]> {
  const output = await new Deno.Command("pgrep", { args: ["-P", String(Deno.pid)], stdout: "piped" })
    .output();
  return new TextDecoder().decode(output.stdout).split("\n").filter((l) => l !== "").map(Number)
    // pgrep itself is our child while it runs.
    .filter((pid) => Number.isInteger(pid));
}

/** Counts processes whose full command line is exactly `sleep 1000`. */
async function countSleepers(): Promise<number> {
  const output = await new Deno.Command("pgrep", { args: ["-x", "-f", "sleep 1000"], stdout: "piped" })
    .output();
  return new TextDecoder().decode(output.stdout).split("\n").filter((l) => l !== "").length;
}

/** Measures how long a `setTimeout(0)` takes to fire; the worst of `tries`. */
async function timerLatency(tries: number): Promise<number> {
  let worst = 0;
  for (let i = 0; i < tries; i++) {
    const start = performance.now();
    await sleep(0);
    worst = Math.max(worst, performance.now() - start);
  }
  return worst;
}

async function main(): Promise<void> {
  const flags = intFlags(Deno.args, { sessions: 1000, settle: 1000, idle: 30000 });
  const n = flags.sessions;
  const rssImport = procStatus("VmRSS");
  const sleepersBefore = await countSleepers();

  // Baseline: the library loaded and exercised once, zero sessions live.
  const warm = spawn({
    argv: ["true"],
    idleMs: 0,
    sandbox: { mode: "none", acknowledge: "unsafe-no-sandbox" },
  });
  for await (const _ of warm.frames()) { /* drain */ }
  await sleep(200);
  const baseline = snapshot();
  say(
    `worker ${Deno.pid}: RSS after import ${(rssImport / 1024).toFixed(1)} MiB, baseline (library loaded, ` +
      `0 sessions) ${(baseline.rss_kib / 1024).toFixed(1)} MiB`,
  );

  const spawnStart = performance.now();
  const held: Held[] = [];
  for (let i = 0; i < n; i++) {
    held.push(
      hold(spawn({ argv: ["sleep", "1000"], sandbox: { mode: "none", acknowledge: "unsafe-no-sandbox" } })),
    );
  }
  const spawnMs = performance.now() - spawnStart;
  await Promise.all(held.map((h) => h.started));
  const startedMs = performance.now() - spawnStart;
  say(
    `spawned ${n} × sleep 1000 in ${spawnMs.toFixed(0)} ms; all start frames after ${
      startedMs.toFixed(0)
    } ms`,
  );
  await sleep(flags.settle);
  const loaded = snapshot();
  const alive = held.filter((h) => !h.session.finished).length;
  say(
    `with ${alive} live sessions: RSS ${(loaded.rss_kib / 1024).toFixed(1)} MiB, HWM ` +
      `${(loaded.hwm_kib / 1024).toFixed(1)} MiB, ${loaded.threads} threads, ${loaded.fds} fds`,
  );
  // Held idle: V8's memory reducer gives back the young generation the spawn burst grew, once the heap has
  // been quiet for some seconds (as it is in a process that holds idle sessions).
  await sleep(flags.idle);
  const idle = snapshot();
  say(
    `after ${(flags.idle / 1000).toFixed(0)} s more of idleness: RSS ${(idle.rss_kib / 1024).toFixed(1)} MiB`,
  );

  // "No hang": the event loop, async file I/O and one terminal still respond with N sessions live.
  const timerMs = await timerLatency(5);
  const probeFile = await Deno.makeTempFile({ prefix: "specter-bench-sessions-" });
  await Deno.writeTextFile(probeFile, "probe\n");
  const readStart = performance.now();
  const readOk = (await within(Deno.readTextFile(probeFile), HANG_MS * 10)) === "probe\n";
  const readMs = performance.now() - readStart;
  await Deno.remove(probeFile);
  const target = held[Math.floor(n / 2)]!;
  const echoStart = performance.now();
  target.session.write(`${PROBE}\r`); // sleep never reads it: the terminal's own echo answers.
  let echoMs: number | null = null;
  while (performance.now() - echoStart < HANG_MS * 5) {
    if (target.output.includes(PROBE)) {
      echoMs = performance.now() - echoStart;
      break;
    }
    await sleep(1);
  }
  say(
    `probes: setTimeout(0) worst of 5 ${timerMs.toFixed(2)} ms; readTextFile ${readMs.toFixed(2)} ms ` +
      `(${readOk ? "ok" : "FAILED"}); echo through session #${Math.floor(n / 2)} ` +
      (echoMs === null ? "NO RESPONSE" : `${echoMs.toFixed(2)} ms`),
  );

  // Teardown, with a 10 ms ticker to see how long the event loop is blocked meanwhile.
  let lastTick = performance.now();
  let worstGap = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    worstGap = Math.max(worstGap, now - lastTick);
    lastTick = now;
  }, 10);
  const stopStart = performance.now();
  for (const h of held) void h.session.terminate(2000);
  const terminateCallsMs = performance.now() - stopStart;
  const exits = await within(Promise.all(held.map((h) => h.session.exited)), 120_000);
  const teardownMs = performance.now() - stopStart;
  clearInterval(ticker);
  await within(Promise.all(held.map((h) => h.done)), 5_000);
  const worstGapMs = Math.max(worstGap, performance.now() - lastTick);
  const children = await ourChildren();
  const sleepersAfter = await countSleepers();
  const signals: Record<string, number> = {};
  for (const exit of exits ?? []) {
    const key = exit.signal ?? `code ${exit.code}`;
    signals[key] = (signals[key] ?? 0) + 1;
  }
  const framesByType: Record<string, number> = {};
  for (const h of held) {
    for (const [type, c] of Object.entries(h.frames)) framesByType[type] = (framesByType[type] ?? 0) + c;
  }
  say(
    `terminate(): calls took ${terminateCallsMs.toFixed(0)} ms, all ${
      exits?.length ?? 0
    }/${n} exit frames after ` +
      `${teardownMs.toFixed(0)} ms (event loop blocked up to ${worstGapMs.toFixed(0)} ms); ` +
      `exits ${JSON.stringify(signals)}; children left ${children.length}; ` +
      `'sleep 1000' processes ${sleepersBefore} before, ${sleepersAfter} after`,
  );

  console.log(JSON.stringify({
    sessions: n,
    rss_import_kib: rssImport,
    baseline,
    loaded,
    idle_ms: flags.idle,
    idle,
    alive_at_measure: alive,
    spawn_ms: round(spawnMs, 1),
    all_started_ms: round(startedMs, 1),
    probes: {
      timer_ms: round(timerMs, 2),
      read_file_ms: round(readMs, 2),
      read_file_ok: readOk,
      echo_ms: echoMs === null ? null : round(echoMs, 2),
    },
    teardown: {
      terminate_calls_ms: round(terminateCallsMs, 1),
      all_exited_ms: round(teardownMs, 1),
      exited: exits?.length ?? 0,
      worst_event_loop_gap_ms: round(worstGapMs, 1),
      exits: signals,
    },
    frames_by_type: framesByType,
    children_left: children.length,
    sleepers_before: sleepersBefore,
    sleepers_after: sleepersAfter,
  }));
}

if (import.meta.main) {
  try {
    await main();
  } catch (error: unknown) {
    console.error(error);
    for (const session of started) void session.terminate(0);
    await within(Promise.all(started.map((s) => s.exited)), 30_000);
    Deno.exit(1);
  }
  Deno.exit(0); // The reactor's last off-thread poll() may still be settling; nothing is left to wait for.
}
