/**
 * Spawn-to-first-byte benchmark: `echo hi` through the library's `spawn()`, in this process.
 *
 * Specter: time from just before `spawn()` to the arrival of the first `stdout` frame in a
 * `for await … of session.frames()` loop (the frames are then drained to `exit`, untimed).
 * Baseline: a C program compiled now with `cc` into a temp dir that does `openpty` + `posix_spawnp`
 * (`POSIX_SPAWN_SETSID`, slave opened as the controlling terminal) of `/bin/echo hi` and times to the
 * first byte read from the master; without `cc`, a python3 `pty.fork` loop (and the output says so).
 * Both sides run the same number of timed runs, after warm-up, in interleaved blocks.
 *
 *   deno run -A scripts/bench/spawn.ts [--runs 200] [--warmup 10] [--blocks 10]
 *
 * @module
 */
import { spawn } from "../../src/mod.ts";
import {
  capture,
  finish,
  hasProgram,
  intFlags,
  round,
  roundStats,
  runBenchmark,
  say,
  type Stats,
  stats,
  table,
} from "./_common.ts";

const ACCEPT_MEDIAN_MS = 2;

const C_SOURCE =
  `// Baseline: openpty + posix_spawnp(SETSID) of /bin/echo hi, time to the first byte on the master.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  int warmup = argc > 1 ? atoi(argv[1]) : 0, runs = argc > 2 ? atoi(argv[2]) : 1;
  char *args[] = {"/bin/echo", "hi", NULL};
  for (int i = 0; i < warmup + runs; i++) {
    double start = now_ms();
    int master, slave;
    char name[4096];
    if (openpty(&master, &slave, name, NULL, NULL) != 0) { perror("openpty"); return 1; }
    fcntl(master, F_SETFD, FD_CLOEXEC);
    fcntl(slave, F_SETFD, FD_CLOEXEC);
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, name, O_RDWR, 0);
    posix_spawn_file_actions_adddup2(&actions, 0, 1);
    posix_spawn_file_actions_adddup2(&actions, 0, 2);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
    pid_t pid;
    int rc = posix_spawnp(&pid, args[0], &actions, &attr, args, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    close(slave);
    if (rc != 0) { fprintf(stderr, "posix_spawnp: %d\\n", rc); return 1; }
    char buf[4096];
    struct pollfd p = {master, POLLIN, 0};
    ssize_t n = -1;
    for (;;) {
      if (poll(&p, 1, -1) < 0 && errno == EINTR) continue;
      n = read(master, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      break;
    }
    double elapsed = now_ms() - start;
    if (n <= 0) { fprintf(stderr, "no output (read returned %zd)\\n", n); return 1; }
    while (read(master, buf, sizeof buf) > 0) {} // Drain to EIO: the child closed the terminal.
    waitpid(pid, NULL, 0);
    close(master);
    if (i >= warmup) printf("%.4f\\n", elapsed);
  }
  return 0;
}
`;

const PY_SOURCE =
  `# Fallback baseline (no C compiler): pty.fork + exec of /bin/echo hi, time to the first byte.
import os, pty, sys, time
warmup, runs = int(sys.argv[1]), int(sys.argv[2])
for i in range(warmup + runs):
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.execv("/bin/echo", ["/bin/echo", "hi"])
    os.read(fd, 4096)
    elapsed = (time.perf_counter() - start) * 1e3
    try:
        while os.read(fd, 4096):
            pass
    except OSError:  # EIO: the child closed the terminal
        pass
    os.waitpid(pid, 0)
    os.close(fd)
    if i >= warmup:
        print(f"{elapsed:.4f}")
`;

/** How the baseline is run. */
interface Baseline {
  readonly name: string;
  readonly argv: readonly string[];
}

/** Compiles the C baseline (or falls back to python3) inside `dir`. */
async function prepareBaseline(dir: string): Promise<Baseline> {
  if (await hasProgram("cc")) {
    await Deno.writeTextFile(`${dir}/spawn_baseline.c`, C_SOURCE);
    try {
      // openpty lives in libutil on older glibc; newer ones keep a stub libutil, so -lutil is safe.
      await capture(["cc", "-O2", "-o", `${dir}/spawn_baseline`, `${dir}/spawn_baseline.c`, "-lutil"]);
      return { name: "C openpty+posix_spawnp(SETSID)", argv: [`${dir}/spawn_baseline`] };
    } catch (error: unknown) {
      say(`NOTE: compiling the C baseline failed (${(error as Error).message}); falling back to python3`);
    }
  } else {
    say("NOTE: no C compiler (cc) found; the baseline is a python3 pty.fork loop instead");
  }
  await Deno.writeTextFile(`${dir}/spawn_baseline.py`, PY_SOURCE);
  return { name: "python3 pty.fork (fallback)", argv: ["python3", `${dir}/spawn_baseline.py`] };
}

/** Runs the baseline for `runs` timed runs after `warmup` untimed ones; returns ms per run. */
async function runBaseline(baseline: Baseline, warmup: number, runs: number): Promise<number[]> {
  const out = await capture([...baseline.argv, String(warmup), String(runs)]);
  const values = out.trim().split("\n").filter((l) => l !== "").map(Number);
  if (values.length !== runs || values.some((v) => !Number.isFinite(v))) {
    throw new Error(`Baseline printed ${values.length} values, expected ${runs}`);
  }
  return values;
}

/** One specter run: ms from just before `spawn()` to the first `stdout` frame. */
async function specterOnce(): Promise<number> {
  const start = performance.now();
  const session = spawn({
    argv: ["echo", "hi"],
    idleMs: 0,
    sandbox: { mode: "none", acknowledge: "unsafe-no-sandbox" },
  });
  let first = Number.NaN;
  for await (const frame of session.frames()) {
    if (frame.type === "stdout" && Number.isNaN(first)) first = performance.now() - start;
  }
  const exit = await session.exited;
  if (Number.isNaN(first) || exit.code !== 0) {
    throw new Error(`echo hi produced no stdout frame or failed (exit code ${exit.code})`);
  }
  return first;
}

async function main(): Promise<number> {
  const flags = intFlags(Deno.args, { runs: 200, warmup: 10, blocks: 10 });
  const dir = await Deno.makeTempDir({ prefix: "specter-bench-spawn-" });
  try {
    const baseline = await prepareBaseline(dir);
    say(
      `spawn: ${flags.runs} runs of echo hi per side after ${flags.warmup} warm-up runs; baseline: ${baseline.name}`,
    );
    for (let i = 0; i < flags.warmup; i++) await specterOnce();
    await runBaseline(baseline, flags.warmup, 1);

    const specter: number[] = [];
    const base: number[] = [];
    // Blocks alternate which side goes first so that a slow phase of the machine hits both.
    for (let b = 0; b < flags.blocks; b++) {
      const size = Math.floor(flags.runs / flags.blocks) + (b < flags.runs % flags.blocks ? 1 : 0);
      const runSpecter = async () => {
        for (let i = 0; i < size; i++) specter.push(await specterOnce());
      };
      const runBase = async () => void base.push(...await runBaseline(baseline, 1, size));
      if (b % 2 === 0) {
        await runSpecter();
        await runBase();
      } else {
        await runBase();
        await runSpecter();
      }
    }

    const s = roundStats(stats(specter), 3);
    const c = roundStats(stats(base), 3);
    const ratio = s.median / c.median;
    const row = (name: string, v: Stats): string[] => [
      name,
      String(v.n),
      ...[v.median, v.p90, v.min, v.max, v.mean].map((x) => x.toFixed(3)),
    ];
    say(table([
      ["side", "runs", "median ms", "p90 ms", "min ms", "max ms", "mean ms"],
      row("specter spawn()", s),
      row(baseline.name, c),
    ]));
    say(
      `ratio specter median / baseline median = ${
        ratio.toFixed(2)
      }; target: specter median ≤ ${ACCEPT_MEDIAN_MS} ms`,
    );

    const failures: string[] = [];
    if (!(s.median <= ACCEPT_MEDIAN_MS)) {
      failures.push(`specter median ${s.median} ms > ${ACCEPT_MEDIAN_MS} ms`);
    }
    return finish({
      benchmark: "spawn",
      date: new Date().toISOString(),
      runs: flags.runs,
      warmup: flags.warmup,
      unit: "ms from just before spawn() to the first stdout frame (baseline: to the first byte read)",
      specter: s,
      baseline: { name: baseline.name, ...c },
      ratio: round(ratio, 3),
      acceptance: { median_ms_max: ACCEPT_MEDIAN_MS },
    }, failures);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await runBenchmark("spawn", main);
