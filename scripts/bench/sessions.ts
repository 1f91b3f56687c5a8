/**
 * Sessions benchmark: RSS of ONE process holding 1000 idle `sleep 1000` sessions, and proof that the
 * process does not hang while they are live.
 *
 * The measuring happens in a fresh child Deno process (`_sessions_worker.ts`) so that its RSS holds
 * only the runtime, the library and the sessions. Its baseline is the same process with the library
 * loaded and 0 sessions live, measured first. This parent relays the worker's lines, guards it with a
 * timeout (a hung worker and its sessions are killed by pid), double-checks that no `sleep 1000` was
 * left behind, and judges acceptance: RSS ≤ 100 MiB once the sessions were idle `--idle` seconds (the
 * figure 1 s after the spawn burst is printed too, not judged), every probe answered in < 1 s, the event loop
 * never blocked ≥ 1 s while the sessions were terminated, every session exited, nothing left.
 *
 *   deno run -A scripts/bench/sessions.ts [--sessions 1000] [--settle 1000] [--idle 30] [--timeout 600]
 *
 * @module
 */
import { DENO, finish, intFlags, ROOT, round, runBenchmark, say, table } from "./_common.ts";

const ACCEPT_RSS_MIB = 100;
const HANG_MS = 1000;
const WORKER = new URL("./_sessions_worker.ts", import.meta.url).pathname;

/** The worker's JSON line (see `_sessions_worker.ts`). */
interface WorkerResult {
  sessions: number;
  rss_import_kib: number;
  baseline: { rss_kib: number; hwm_kib: number; threads: number; fds: number };
  loaded: { rss_kib: number; hwm_kib: number; threads: number; fds: number };
  idle_ms: number;
  idle: { rss_kib: number; hwm_kib: number; threads: number; fds: number };
  alive_at_measure: number;
  spawn_ms: number;
  all_started_ms: number;
  probes: { timer_ms: number; read_file_ms: number; read_file_ok: boolean; echo_ms: number | null };
  teardown: {
    terminate_calls_ms: number;
    all_exited_ms: number;
    exited: number;
    worst_event_loop_gap_ms: number;
    exits: Record<string, number>;
  };
  frames_by_type: Record<string, number>;
  children_left: number;
  sleepers_before: number;
  sleepers_after: number;
}

/** Pids of the direct children of `pid` (the worker's sessions). */
async function childrenOf(pid: number): Promise<number[]> {
  const output = await new Deno.Command("pgrep", { args: ["-P", String(pid)], stdout: "piped" }).output();
  return new TextDecoder().decode(output.stdout).split("\n").filter((l) => l !== "").map(Number);
}

/** Counts processes whose command line is exactly `sleep 1000`. */
async function countSleepers(): Promise<number> {
  const output = await new Deno.Command("pgrep", { args: ["-x", "-f", "sleep 1000"], stdout: "piped" })
    .output();
  return new TextDecoder().decode(output.stdout).split("\n").filter((l) => l !== "").length;
}

/** Runs the worker, relaying its lines; returns its last line and exit code, or null on timeout. */
async function runWorker(
  args: readonly string[],
  timeoutMs: number,
): Promise<{ last: string; code: number } | null> {
  const child = new Deno.Command(DENO, {
    args: ["run", "-A", WORKER, ...args],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  let timedOut = false;
  const timer = setTimeout(async () => {
    timedOut = true;
    // Kill the sessions first (by pid: they are the worker's children), then the worker.
    for (const pid of await childrenOf(child.pid)) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  }, timeoutMs);
  let last = "";
  let buffered = "";
  for await (const text of child.stdout.pipeThrough(new TextDecoderStream())) {
    buffered += text;
    let nl: number;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line.startsWith("{")) last = line;
      else say(`  ${line}`);
    }
  }
  if (buffered.startsWith("{")) last = buffered;
  const status = await child.status;
  clearTimeout(timer);
  return timedOut ? null : { last, code: status.code };
}

async function main(): Promise<number> {
  const flags = intFlags(Deno.args, { sessions: 1000, settle: 1000, idle: 30, timeout: 600 });
  const sleepersBefore = await countSleepers();
  say(`sessions: one worker process holding ${flags.sessions} × sleep 1000 (timeout ${flags.timeout} s)`);
  const run = await runWorker(
    [
      "--sessions",
      String(flags.sessions),
      "--settle",
      String(flags.settle),
      "--idle",
      String(flags.idle * 1000),
    ],
    flags.timeout * 1000,
  );
  const sleepersAfter = await countSleepers();
  if (run === null) {
    return finish({ benchmark: "sessions", sessions: flags.sessions, error: "worker timed out" }, [
      `the worker did not finish within ${flags.timeout} s (hang); it and its sessions were killed`,
    ]);
  }
  if (run.code !== 0 || run.last === "") {
    return finish({ benchmark: "sessions", sessions: flags.sessions, error: `worker exited ${run.code}` }, [
      `the worker failed (exit code ${run.code})`,
    ]);
  }
  const w = JSON.parse(run.last) as WorkerResult;
  const n = w.sessions;
  // Judged once the sessions have been idle a while (`--idle`, 30 s): the figure a process holding idle
  // sessions keeps. The one right after the spawn burst (`--settle`, 1 s) is printed beside it.
  const burstMiB = w.loaded.rss_kib / 1024;
  const rssMiB = w.idle.rss_kib / 1024;
  const hwmMiB = w.idle.hwm_kib / 1024;
  const baseMiB = w.baseline.rss_kib / 1024;
  const perSessionKiB = (w.idle.rss_kib - w.baseline.rss_kib) / n;
  const ratio = w.idle.rss_kib / w.baseline.rss_kib;
  const leftover = Math.max(0, sleepersAfter - sleepersBefore);

  say();
  say(table([
    ["figure", "value"],
    ["baseline RSS (library loaded, 0 sessions)", `${baseMiB.toFixed(1)} MiB`],
    [
      `RSS with ${n} sessions, ${flags.settle / 1000} s after the burst`,
      `${burstMiB.toFixed(1)} MiB (the burst's young generation; not judged)`,
    ],
    [
      `RSS with ${n} sessions, idle ${flags.idle} s more`,
      `${rssMiB.toFixed(1)} MiB (VmHWM ${hwmMiB.toFixed(1)} MiB)`,
    ],
    ["per session", `${perSessionKiB.toFixed(1)} KiB`],
    ["ratio RSS / baseline RSS", ratio.toFixed(2)],
    ["spawn() × n / all start frames", `${w.spawn_ms.toFixed(0)} ms / ${w.all_started_ms.toFixed(0)} ms`],
    ["setTimeout(0) worst of 5", `${w.probes.timer_ms.toFixed(2)} ms`],
    ["Deno.readTextFile", `${w.probes.read_file_ms.toFixed(2)} ms`],
    [
      "input echo via one session",
      w.probes.echo_ms === null ? "no response" : `${w.probes.echo_ms.toFixed(2)} ms`,
    ],
    ["terminate() × n (synchronous part)", `${w.teardown.terminate_calls_ms.toFixed(0)} ms`],
    ["all exit frames after", `${w.teardown.all_exited_ms.toFixed(0)} ms (${w.teardown.exited}/${n})`],
    ["event loop blocked during teardown, worst", `${w.teardown.worst_event_loop_gap_ms.toFixed(0)} ms`],
    ["'sleep 1000' left (worker children / system-wide)", `${w.children_left} / ${leftover}`],
  ]));

  const failures: string[] = [];
  if (!(rssMiB <= ACCEPT_RSS_MIB)) failures.push(`RSS ${rssMiB.toFixed(1)} MiB > ${ACCEPT_RSS_MIB} MiB`);
  if (w.alive_at_measure !== n) {
    failures.push(`only ${w.alive_at_measure}/${n} sessions were live when measured`);
  }
  if (!(w.probes.timer_ms < HANG_MS)) failures.push(`setTimeout(0) took ${w.probes.timer_ms} ms`);
  if (!w.probes.read_file_ok || !(w.probes.read_file_ms < HANG_MS)) {
    failures.push(`Deno.readTextFile took ${w.probes.read_file_ms} ms (ok: ${w.probes.read_file_ok})`);
  }
  if (w.probes.echo_ms === null || !(w.probes.echo_ms < HANG_MS)) {
    failures.push(`input echo through one session: ${w.probes.echo_ms ?? "no response"}`);
  }
  // Ending the sessions must not freeze the process either (the runtime serves everything else too).
  if (!(w.teardown.worst_event_loop_gap_ms < HANG_MS)) {
    failures.push(
      `terminating the sessions blocked the event loop for ${w.teardown.worst_event_loop_gap_ms} ms`,
    );
  }
  if (w.teardown.exited !== n) failures.push(`only ${w.teardown.exited}/${n} sessions reported exit`);
  if (w.children_left > 0 || leftover > 0) {
    failures.push(`processes left behind: ${w.children_left} worker children, ${leftover} 'sleep 1000'`);
  }
  return finish({
    benchmark: "sessions",
    date: new Date().toISOString(),
    sessions: n,
    rss_mib: round(rssMiB, 1),
    burst_rss_mib: round(burstMiB, 1),
    idle_s: flags.idle,
    hwm_mib: round(hwmMiB, 1),
    baseline_rss_mib: round(baseMiB, 1),
    per_session_kib: round(perSessionKiB, 1),
    ratio: round(ratio, 3),
    no_hang: {
      teardown_worst_event_loop_gap_ms: w.teardown.worst_event_loop_gap_ms,
      timer_ms: w.probes.timer_ms,
      read_file_ms: w.probes.read_file_ms,
      echo_ms: w.probes.echo_ms,
    },
    teardown: w.teardown,
    leftover_sleepers: leftover,
    worker: w,
    acceptance: { rss_mib_max: ACCEPT_RSS_MIB, probe_ms_max: HANG_MS },
  }, failures);
}

if (import.meta.main) await runBenchmark("sessions", main);
