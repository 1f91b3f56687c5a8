/**
 * The daemon's figures, each with a baseline measured in the same run:
 *
 * - **Idle memory**: RSS of the daemon plus its keeper with N idle sessions (`cat`, sandboxed), against
 *   the two with none (the per-session cost is the difference / N), a bare Deno process (the ratio's
 *   baseline) and the floors of a keeper and a daemon as Deno programs (`_floors.ts`).
 * - **Warm spawn**: `session.create` (with `attach`) of `true` through a running daemon: until its answer (the
 *   program runs: the figure the target is for) and until its `exit` frame, against `spawn()` of `true` in
 *   this process to its exit (same sandbox mode); sandboxed and not.
 * - **Attach**: `session.attach` of a session with ≥ 10 000 logged frames until the last of them arrives,
 *   against reading the same log in this process (`readLog`).
 * - **Log append**: `FrameStore.append` of 100-byte output frames under each fsync policy, against plain
 *   `write()` of the same lines to a file.
 *
 * It leaves no process behind: once its directory is removed, no daemon or keeper of its own may be left
 * (a keeper whose state directory is gone ends on its own); any still there is a failure, and killed.
 *
 *   deno run -A scripts/bench/daemon.ts [--sessions 1000] [--spawns 40] [--settle 30]
 *
 * @module
 */
import { join } from "node:path";
import { DaemonClient, FrameStore, readLog } from "../../src/daemon/mod.ts";
import { spawn } from "../../src/mod.ts";
import { KEEPER_V8_FLAGS, LEAN_V8_FLAGS, selfProgram } from "../../src/cli/self_command.ts";
import { floorRssKib } from "./_floors.ts";
import type { Frame } from "../../src/protocol/mod.ts";
import {
  finish,
  intFlags,
  keeperPid,
  procStatus,
  pssKib,
  round,
  runBenchmark,
  say,
  sleep,
  stats,
  table,
} from "./_common.ts";

const ACCEPT_IDLE_MIB = 100;
const ACCEPT_SPAWN_MS = 5;
const ACCEPT_ATTACH_MS = 100;
const NO_SANDBOX = { sandbox: "none", "unsafe-no-sandbox": true, "ack-no-network-enforcement": true };

interface Place {
  readonly dir: string;
  readonly socket: string;
  readonly stateDir: string;
}

async function startDaemon(place: Place): Promise<Deno.ChildProcess> {
  // As a client autostarts it (under `deno run`: `src/cli/daemon.ts` as the main module).
  const [program, ...rest] = selfProgram("daemon");
  const child = new Deno.Command(program!, {
    args: [
      ...rest,
      "daemon",
      "--socket",
      place.socket,
      "--state-dir",
      place.stateDir,
      "--history",
      join(place.dir, "log.sqlite"),
    ],
    stdin: "null",
    stdout: "null",
    stderr: "inherit",
    // As an autostarted daemon runs (and its keeper, which it starts so).
    env: { DENO_V8_FLAGS: LEAN_V8_FLAGS },
  }).spawn();
  for (let i = 0; i < 400; i++) {
    try {
      (await DaemonClient.connect({ socketPath: place.socket })).close();
      return child;
    } catch {
      await sleep(25);
    }
  }
  throw new Error("The daemon did not come up");
}

/** Processes whose command line names a path under `dir` (this run's daemons, keepers and sandboxes). */
function processesUnder(dir: string): { pid: number; args: string }[] {
  const out: { pid: number; args: string }[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name) || Number(entry.name) === Deno.pid) continue;
    try {
      const args = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).split("\0");
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      const zombie = stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
      if (!zombie && args.some((arg) => arg.startsWith(`${dir}/`))) {
        out.push({ pid: Number(entry.name), args: args.join(" ").trim() });
      }
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

/**
 * Waits up to `ms` for every process of this run to end; those left are failures (and are killed, so
 * that a failing run leaves nothing either).
 */
async function leftBehind(dir: string, ms = 15_000): Promise<string[]> {
  const deadline = Date.now() + ms;
  let left = processesUnder(dir);
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(250);
    left = processesUnder(dir);
  }
  for (const { pid } of left) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // Ended meanwhile.
    }
  }
  return left.map(({ pid, args }) => `process ${pid} left behind ${ms / 1000} s after the run: ${args}`);
}

/**
 * A run stopped by a signal (Ctrl-C, `timeout`, a closed terminal) ends as a finished one does: its daemons
 * and keepers killed (their sandboxed programs die with the keeper) and its directory removed. Otherwise a
 * keeper holding its 1,000 sessions stays, as a keeper should for a daemon that went away, and inflates the
 * next run's figures (PSS above all: a third Deno process sharing the binary's pages).
 */
function endOnSignals(dir: string): void {
  const codes = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
  for (const [signal, code] of Object.entries(codes)) {
    Deno.addSignalListener(signal as keyof typeof codes, () => {
      for (const { pid } of processesUnder(dir)) {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch {
          // Ended meanwhile.
        }
      }
      try {
        Deno.removeSync(dir, { recursive: true });
      } catch {
        // A sandbox's files may still be going; the processes are gone, which is what matters.
      }
      console.error(`bench:daemon: stopped by ${signal}; its daemons and keepers were killed`);
      Deno.exit(code);
    });
  }
}

/** Waits for a session's exit frame through an attach; resolves with the time it arrived. */
function untilExit(client: DaemonClient, name: string): Promise<number> {
  return new Promise((resolve) => {
    client.onNotification = (method, params) => {
      if (method === "frame" && params.name === name && (params.frame as Frame).type === "exit") {
        resolve(performance.now());
      }
    };
  });
}

async function main(): Promise<number> {
  const { sessions: count, spawns, settle: settleSeconds } = intFlags(Deno.args, {
    sessions: 1000,
    spawns: 40,
    settle: 30,
  });
  const dir = Deno.makeTempDirSync({ prefix: "specter-bench-daemon-" });
  Deno.chmodSync(dir, 0o700);
  endOnSignals(dir);
  const failures: string[] = [];
  const result: Record<string, unknown> = { benchmark: "daemon" };

  // ── idle memory: a daemon of its own (the other figures' sessions would count in its heap) ──────
  {
    const place = { dir, socket: join(dir, "run", "idle.sock"), stateDir: join(dir, "idle") };
    const daemon = await startDaemon(place);
    const client = await DaemonClient.connect({ socketPath: place.socket });
    try {
      const keeper = keeperPid(place.stateDir);
      const rss = () => (procStatus("VmRSS", daemon.pid) + procStatus("VmRSS", keeper)) / 1024;
      await sleep(1000);
      const before = rss();
      const daemonBefore = procStatus("VmRSS", daemon.pid) / 1024;
      const keeperBefore = procStatus("VmRSS", keeper) / 1024;
      // The same-run floors: a bare Deno process (the baseline of the ratio); a process with the libc binding,
      // which both need, with the keeper's flags and with the daemon's; and that with zod, as the daemon has.
      const bare = await floorRssKib("bare", LEAN_V8_FLAGS, 1000) / 1024;
      const keeperFloor = await floorRssKib("terminal", KEEPER_V8_FLAGS, 1000) / 1024;
      const daemonFloor = await floorRssKib("terminal", LEAN_V8_FLAGS, 1000) / 1024;
      const zodFloor = await floorRssKib("validating", LEAN_V8_FLAGS, 1000) / 1024;
      const floor = keeperFloor + daemonFloor;
      const t0 = performance.now();
      for (let i = 0; i < count; i++) {
        await client.call("session.create", { name: `idle-${i}`, argv: ["cat"], cwd: dir, flags: {} });
      }
      const createSeconds = (performance.now() - t0) / 1000;
      await sleep(3000);
      const after = rss();
      const daemonAfter = procStatus("VmRSS", daemon.pid) / 1024;
      const keeperAfter = procStatus("VmRSS", keeper) / 1024;
      // Idle for a while: V8's memory reducer gives back the young generation the creation burst grew
      // (it runs once the heap has been quiet for some seconds), as in a daemon that holds idle sessions.
      await sleep(settleSeconds * 1000);
      const settled = rss();
      const daemonSettled = procStatus("VmRSS", daemon.pid) / 1024;
      const keeperSettled = procStatus("VmRSS", keeper) / 1024;
      const pss = (pssKib(daemon.pid) + pssKib(keeper)) / 1024;
      say(
        `Idle memory (daemon + keeper RSS), ${count} idle sandboxed sessions (created in ${
          round(createSeconds, 1)
        } s):`,
      );
      say(table([
        [
          "no session (MiB)",
          "daemon / keeper",
          `${count} sessions (MiB)`,
          "daemon / keeper",
          "per session (KiB)",
          "daemon / keeper",
        ],
        [
          String(round(before, 1)),
          `${round(daemonBefore, 1)} / ${round(keeperBefore, 1)}`,
          String(round(after, 1)),
          `${round(daemonAfter, 1)} / ${round(keeperAfter, 1)}`,
          String(round((after - before) * 1024 / count, 1)),
          `${round((daemonAfter - daemonBefore) * 1024 / count, 1)} / ${
            round((keeperAfter - keeperBefore) * 1024 / count, 1)
          }`,
        ],
      ]));
      say(
        `After ${settleSeconds} s more of idleness: ${round(settled, 1)} MiB (daemon ` +
          `${round(daemonSettled, 1)}, keeper ${
            round(keeperSettled, 1)
          }); proportional (PSS: pages the two ` +
          `share, such as Deno's binary, counted once) ${round(pss, 1)} MiB`,
      );
      // Same-run baseline: two bare Deno processes (the floor of a daemon and a keeper as Deno programs).
      say(
        `Baseline (same run): a bare Deno process ${round(bare, 1)} MiB, two ${round(2 * bare, 1)} MiB; ` +
          `ratio with ${count} sessions ${round(after / (2 * bare), 2)}, with none ${
            round(before / (2 * bare), 2)
          }; keeper / bare ${round(keeperBefore / bare, 2)}, daemon / bare ${round(daemonBefore / bare, 2)}`,
      );
      // What the goal leaves once the floors are paid: for both programs' own code and every session.
      const withZod = keeperFloor + zodFloor;
      const left = ACCEPT_IDLE_MIB - floor;
      const leftWithZod = ACCEPT_IDLE_MIB - withZod;
      const mib = (value: number) => String(round(value, 1));
      const perSession = (value: number) => String(round(value * 1024 / count, 1));
      say(
        "Floor (same run), a Deno process with Specter's libc binding (any process holding a terminal): " +
          `${mib(keeperFloor)} MiB as the keeper runs (lite mode), ${mib(daemonFloor)} MiB as the daemon ` +
          `does, ${mib(zodFloor)} MiB with zod as well; keeper + daemon ${mib(floor)} MiB (${mib(withZod)} ` +
          `with zod). The ${ACCEPT_IDLE_MIB} MiB goal leaves ${mib(left)} MiB (${mib(leftWithZod)}) ` +
          `for both programs' own code and ${count} sessions, ${perSession(left)} KiB ` +
          `(${perSession(leftWithZod)}) ` +
          `per session; measured: ${mib(after - floor)} MiB above the floor`,
      );
      say();
      result.idle = {
        sessions: count,
        before_mib: round(before, 1),
        after_mib: round(after, 1),
        daemon_before_mib: round(daemonBefore, 1),
        keeper_before_mib: round(keeperBefore, 1),
        daemon_after_mib: round(daemonAfter, 1),
        keeper_after_mib: round(keeperAfter, 1),
        bare_deno_mib: round(bare, 1),
        keeper_floor_mib: round(keeperFloor, 1),
        daemon_floor_mib: round(daemonFloor, 1),
        daemon_floor_with_zod_mib: round(zodFloor, 1),
        floor_mib: round(floor, 1),
        ratio_to_two_bare: round(after / (2 * bare), 3),
        settle_s: settleSeconds,
        settled_mib: round(settled, 1),
        daemon_settled_mib: round(daemonSettled, 1),
        keeper_settled_mib: round(keeperSettled, 1),
        settled_pss_mib: round(pss, 1),
      };
      if (after > ACCEPT_IDLE_MIB) {
        failures.push(`${count} idle sessions: ${round(after, 1)} MiB > ${ACCEPT_IDLE_MIB} MiB`);
      }
    } finally {
      await client.call("daemon.stop", { kill_sessions: true }).catch(() => {});
      client.close();
      await daemon.status;
    }
    await sleep(2000); // The sandboxes' processes go.
  }

  const place = { dir, socket: join(dir, "run", "d.sock"), stateDir: join(dir, "state") };
  const daemon = await startDaemon(place);
  const client = await DaemonClient.connect({ socketPath: place.socket });
  try {
    // ── warm spawn ─────────────────────────────────────────────────────────────────────────────
    const spawnRows: string[][] = [[
      "sandbox",
      "answered: running (ms, median)",
      "create → exit frame (ms, median)",
      "in-process spawn() → exit (ms)",
      "ratio",
    ]];
    for (
      const [mode, flags, sandbox] of [
        ["bwrap", {}, undefined],
        ["none", NO_SANDBOX, { mode: "none", acknowledge: "unsafe-no-sandbox" } as const],
      ] as const
    ) {
      const viaDaemon: number[] = [];
      const answered: number[] = [];
      const inProcess: number[] = [];
      for (let i = 0; i < spawns + 3; i++) {
        const name = `spawn-${mode}-${i}`;
        const exited = untilExit(client, name);
        const started = performance.now();
        await client.call("session.create", { name, argv: ["true"], cwd: dir, flags, attach: true });
        const created = performance.now();
        const at = await exited;
        const local0 = performance.now();
        const session = spawn({ argv: ["true"], cwd: dir, ...(sandbox === undefined ? {} : { sandbox }) });
        for await (const _ of session.frames()) { /* drained to exit */ }
        const local = performance.now() - local0;
        if (i < 3) continue; // Warm-up.
        viaDaemon.push(at - started);
        answered.push(created - started);
        inProcess.push(local);
      }
      const d = stats(viaDaemon);
      const p = stats(inProcess);
      const a = stats(answered);
      spawnRows.push([
        mode,
        String(round(a.median)),
        String(round(d.median)),
        String(round(p.median)),
        String(round(d.median / p.median)),
      ]);
      result[`spawn_${mode}_ms`] = {
        started: round(a.median),
        daemon: round(d.median),
        in_process: round(p.median),
        p90: round(d.p90),
      };
      // The spawn is done when the daemon answers: the program runs (its exit frame is reported too).
      if (mode === "none" && a.median > ACCEPT_SPAWN_MS) {
        failures.push(`warm spawn of true through the daemon: ${round(a.median)} ms > ${ACCEPT_SPAWN_MS} ms`);
      }
    }
    say(
      "Warm spawn of `true` through the daemon (session.create with attach: its answer, then its exit frame):",
    );
    say(table(spawnRows));
    say();

    // ── attach with ≥ 10 000 logged frames ─────────────────────────────────────────────────────
    // Each typed line is a `stdin` frame and its echo at least one `stdout` frame.
    await client.call("session.create", { name: "long", argv: ["cat"], cwd: dir, flags: {} });
    for (let sent = 0; sent < 10_400; sent += 200) {
      await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          client.call("session.send", {
            name: "long",
            message: { v: 1, type: "input", data: `line ${sent + i}\r` },
          })),
      );
    }
    await sleep(1000);
    const { sessions: listed } = await client.call("session.list") as {
      sessions: { name: string; next_seq: number }[];
    };
    const frames = listed.find((s) => s.name === "long")!.next_seq;
    const attachTimes: number[] = [];
    const readTimes: number[] = [];
    for (let i = 0; i < 12; i++) {
      const watcher = await DaemonClient.connect({ socketPath: place.socket });
      let got = 0;
      const done = new Promise<number>((resolve) => {
        watcher.onNotification = (method) => {
          if (method === "frame" && ++got === frames) resolve(performance.now());
        };
      });
      const t0 = performance.now();
      await watcher.call("session.attach", { name: "long", from: 0, control: false });
      const t1 = await done;
      watcher.close();
      const r0 = performance.now();
      readLog(join(place.stateDir, "sessions", "long", "frames"));
      const r1 = performance.now();
      if (i < 2) continue;
      attachTimes.push(t1 - t0);
      readTimes.push(r1 - r0);
    }
    const attach = stats(attachTimes);
    const read = stats(readTimes);
    say(`Attach to a session with ${frames} logged frames (until the last one arrived):`);
    say(table([
      ["attach (ms, median)", "p90", "readLog in-process (ms)", "ratio"],
      [
        String(round(attach.median)),
        String(round(attach.p90)),
        String(round(read.median)),
        String(round(attach.median / read.median)),
      ],
    ]));
    say();
    result.attach = {
      frames,
      median_ms: round(attach.median),
      p90_ms: round(attach.p90),
      read_log_ms: round(read.median),
    };
    if (frames < 10_000) failures.push(`the attach session logged only ${frames} frames`);
    if (attach.median > ACCEPT_ATTACH_MS) {
      failures.push(`attach ${round(attach.median)} ms > ${ACCEPT_ATTACH_MS} ms`);
    }
  } finally {
    await client.call("daemon.stop", { kill_sessions: true }).catch(() => {});
    client.close();
    await daemon.status;
  }

  // ── log append ─────────────────────────────────────────────────────────────────────────────
  const line = "x".repeat(100);
  const appendRows: string[][] = [["policy", "frames/s", "MB/s", "vs plain write()"]];
  const plainStart = performance.now();
  const plainFile = Deno.openSync(join(dir, "plain.ndjson"), { write: true, create: true });
  const encoded = new TextEncoder().encode(
    JSON.stringify({ seq: 1, ts: 1, type: "stdout", data: line }) + "\n",
  );
  const N = 100_000;
  for (let i = 0; i < N; i++) plainFile.writeSync(encoded);
  plainFile.close();
  const plainRate = N / ((performance.now() - plainStart) / 1000);
  const policies: [string, number | "always" | "never"][] = [["never", "never"], ["every 50 ms", 50], [
    "always",
    "always",
  ]];
  const append: Record<string, number> = {};
  for (const [label, policy] of policies) {
    const n = policy === "always" ? 5000 : N;
    const store = FrameStore.open({ dir: join(dir, `log-${label.replaceAll(" ", "")}`), session: "bench" });
    let bytes = 0;
    const start = performance.now();
    let lastSync = start;
    for (let i = 0; i < n; i++) {
      const frame = { seq: i, ts: 1, type: "stdout", data: line } as Frame;
      store.append(frame, i * 101, policy === "always" ? "always" : "never");
      bytes += 130;
      if (typeof policy === "number" && performance.now() - lastSync >= policy) {
        store.sync();
        lastSync = performance.now();
      }
    }
    store.close();
    const seconds = (performance.now() - start) / 1000;
    append[label] = Math.round(n / seconds);
    appendRows.push([
      label,
      String(Math.round(n / seconds)),
      String(round(bytes / seconds / 1e6, 1)),
      String(round(n / seconds / plainRate)),
    ]);
  }
  say("Frame log append (100-byte output frames):");
  say(table(appendRows));
  result.append_frames_per_s = { ...append, plain_write: Math.round(plainRate) };
  Deno.removeSync(dir, { recursive: true });
  const left = await leftBehind(dir);
  say(left.length === 0 ? "No daemon or keeper of this run is left." : left.join("\n"));
  failures.push(...left);
  result.left_behind = left.length;
  return finish(result, failures);
}

await runBenchmark("daemon", main);
