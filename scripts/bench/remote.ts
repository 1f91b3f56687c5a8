/**
 * `deno task bench:remote`: frames per second and MB/s from a daemon to its clients, over the unix socket
 * (the baseline, measured in the same run) and over the WebSocket to 1 and to 10 viewers, each without and
 * with zstd, and the byte ratio zstd achieves on the workload.
 *
 * Workload: 6 MB of a build log with colours (a fixed-seed generator: the same bytes in every run), printed
 * by `cat` in a session without a sandbox (the transport is measured, not the sandbox). Two phases:
 *
 * - **live**: every client attached before the program starts; from `go` to each client's `session.end`.
 *   The terminal itself (the PTY) bounds this rate; the question is whether a transport keeps up with it.
 * - **catch-up**: clients attach from seq 0 to the ended session, 4 times: the daemon reads its log and sends
 *   it as fast as the transport and the client take it (the transport's own rate). A remote attach sends
 *   at most 8 MiB of log, so the workload is smaller than that.
 *
 * MB/s counts the program's output bytes (the frames' payload) per client, 10^6 bytes per second. The clients
 * run in this process (parsing every frame, as a program would), on the same 2 cores as the daemon; each
 * WebSocket row is compared with the unix socket with as many clients.
 *
 *   deno task bench:remote [--rounds 3] [--mb 6]
 *
 * @module
 */
import { join } from "node:path";
import { zstdDecompressSync } from "node:zlib";
import { DaemonClient } from "../../src/daemon/mod.ts";
import {
  DENO,
  finish,
  intFlags,
  keeperPid,
  MAIN_TS,
  round,
  runBenchmark,
  say,
  sleep,
  stats,
  table,
  xorshift32,
} from "./_common.ts";

/** The brief's figure for compressed streaming. */
const ACCEPT_ZSTD_MBPS = 40;
/** Catch-ups per round and contestant (each of the whole log). */
const CATCHUPS = 4;
const NO_SANDBOX = { sandbox: "none", "unsafe-no-sandbox": true, "ack-no-network-enforcement": true };

/** A build log with colours, `mb` × 10^6 bytes, the same in every run. */
function workload(path: string, mb: number): void {
  const next = xorshift32(20261126);
  const words = ["src", "core", "net", "ui", "util", "io", "parse", "render", "test", "db", "auth", "cache"];
  const parts: string[] = [];
  let size = 0;
  let n = 0;
  while (size < mb * 1e6) {
    const a = words[next() % words.length]!;
    const b = words[next() % words.length]!;
    const line = next() % 17 === 0
      ? `\x1b[33mwarning:\x1b[0m ${a}/${b}_${next() % 1000}.c:${next() % 900}: unused variable 'tmp${
        next() % 50
      }'\n`
      : `[${String(++n).padStart(6)}/999999] \x1b[32mCC\x1b[0m ${a}/${b}/${b}_${
        next() % 10000
      }.o -O2 -Wall -fPIC -I${a}/include\n`;
    parts.push(line);
    size += line.length;
  }
  Deno.writeTextFileSync(path, parts.join(""));
}

interface Count {
  frames: number;
  bytes: number;
  wire: number;
  end: number;
  ended: Promise<void>;
}

/** A client that stays connected across sessions: each attach counts what it gets until `session.end`. */
interface Viewer {
  attach(name: string, from?: number): Promise<Count>;
  close(): void;
}

function newCount(): { count: Count; resolve: () => void } {
  const { promise, resolve } = Promise.withResolvers<void>();
  return { count: { frames: 0, bytes: 0, wire: 0, end: 0, ended: promise }, resolve };
}

/** A viewer on the WebSocket (as a program would be: JSON-RPC over text or zstd messages). */
async function wsViewer(url: string, token: string, zstd: boolean): Promise<Viewer> {
  const socket = new WebSocket(url, ["specter.v1", `specter.token.${token}`]);
  socket.binaryType = "arraybuffer";
  await new Promise<void>((resolve, reject) => {
    socket.onopen = () => resolve();
    socket.onerror = () => reject(new Error("refused"));
  });
  const decoder = new TextDecoder();
  const answers: (() => void)[] = [];
  let current: { count: Count; resolve: () => void } | null = null;
  socket.onmessage = (event) => {
    let text: string;
    let wire: number;
    if (typeof event.data === "string") {
      text = event.data;
      wire = text.length;
    } else {
      const bytes = new Uint8Array(event.data as ArrayBuffer);
      wire = bytes.length;
      text = decoder.decode(zstdDecompressSync(bytes));
    }
    if (current !== null) current.count.wire += wire;
    for (const part of text.split("\n")) {
      if (part === "") continue;
      const message = JSON.parse(part);
      if (message.id !== undefined) {
        answers.shift()?.();
      } else if (current !== null && message.method === "frame") {
        current.count.frames++;
        if (message.params.frame.type === "stdout") current.count.bytes += message.params.frame.data.length;
      } else if (current !== null && message.method === "session.end") {
        current.count.end = performance.now();
        current.resolve();
      }
    }
  };
  let id = 0;
  const call = (method: string, params: unknown) =>
    new Promise<void>((resolve) => {
      answers.push(resolve);
      socket.send(JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }));
    });
  await call("daemon.hello", { protocol: 1, compress: zstd ? "zstd" : "none" });
  return {
    async attach(name, from) {
      current = newCount();
      const count = current.count;
      await call("session.attach", { name, control: false, ...(from === undefined ? {} : { from }) });
      return count;
    },
    close: () => socket.close(),
  };
}

/** The baseline: a client on the unix socket. */
async function unixViewer(socketPath: string): Promise<Viewer> {
  const client = await DaemonClient.connect({ socketPath });
  let current: { count: Count; resolve: () => void } | null = null;
  client.onNotification = (method, params) => {
    if (current === null) return;
    if (method === "frame") {
      current.count.frames++;
      const frame = params.frame as { type: string; data?: string };
      if (frame.type === "stdout") current.count.bytes += frame.data!.length;
    } else if (method === "session.end") {
      current.count.end = performance.now();
      current.resolve();
    }
  };
  return {
    async attach(name, from) {
      current = newCount();
      const count = current.count;
      await client.call("session.attach", { name, control: false, ...(from === undefined ? {} : { from }) });
      return count;
    },
    close: () => client.close(),
  };
}

interface Contestant {
  readonly label: string;
  readonly viewers: number;
  readonly transport: "unix" | "ws";
  readonly zstd: boolean;
}

const CONTESTANTS: readonly Contestant[] = [
  { label: "unix socket, 1 client", viewers: 1, transport: "unix", zstd: false },
  { label: "WebSocket, 1 viewer", viewers: 1, transport: "ws", zstd: false },
  { label: "WebSocket, 1 viewer, zstd", viewers: 1, transport: "ws", zstd: true },
  { label: "unix socket, 10 clients", viewers: 10, transport: "unix", zstd: false },
  { label: "WebSocket, 10 viewers", viewers: 10, transport: "ws", zstd: false },
  { label: "WebSocket, 10 viewers, zstd", viewers: 10, transport: "ws", zstd: true },
];

async function main(): Promise<number> {
  const { rounds, mb } = intFlags(Deno.args, { rounds: 3, mb: 6 });
  const dir = Deno.makeTempDirSync({ prefix: "specter-bench-remote-" });
  Deno.chmodSync(dir, 0o700);
  const file = join(dir, "build.log");
  workload(file, mb);
  const socket = join(dir, "run", "d.sock");
  const stateDir = join(dir, "state");
  const daemon = new Deno.Command(DENO, {
    args: [
      "run",
      "-A",
      MAIN_TS,
      "daemon",
      "--socket",
      socket,
      "--state-dir",
      stateDir,
      "--history",
      join(dir, "log.sqlite"),
      "--bind",
      "127.0.0.1:0",
      "--compress",
      "zstd",
      "--max-clients",
      "32",
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const failures: string[] = [];
  try {
    let info: { url: string; viewer_token: string } | null = null;
    for (let i = 0; i < 400 && info === null; i++) {
      try {
        info = JSON.parse(Deno.readTextFileSync(join(stateDir, "remote.json")));
      } catch {
        await sleep(25);
      }
    }
    if (info === null) throw new Error("The daemon did not come up");
    const wsUrl = info.url.replace(/^http/, "ws") + "v1/ws";
    const control = await DaemonClient.connect({ socketPath: socket });
    // Every client connects once and stays (an address opens at most 60 WebSockets a minute).
    const viewers = new Map<string, Viewer[]>();
    for (const c of CONTESTANTS) {
      viewers.set(
        c.label,
        await Promise.all(
          Array.from(
            { length: c.viewers },
            () => c.transport === "unix" ? unixViewer(socket) : wsViewer(wsUrl, info!.viewer_token, c.zstd),
          ),
        ),
      );
    }
    const bytes = Deno.statSync(file).size;
    say(`bench:remote: ${(bytes / 1e6).toFixed(1)} MB of a coloured build log per session, ${rounds} rounds`);
    const results = new Map<
      string,
      { live: number[]; liveFps: number[]; catchup: number[]; catchupFps: number[]; ratio: number[] }
    >();
    for (const c of CONTESTANTS) {
      results.set(c.label, { live: [], liveFps: [], catchup: [], catchupFps: [], ratio: [] });
    }
    let serial = 0;
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? CONTESTANTS : [...CONTESTANTS].reverse();
      for (const c of order) {
        const name = `s${serial++}`;
        await control.call("session.create", {
          name,
          argv: ["/bin/sh", "-c", `read go; exec cat ${file}`],
          cwd: dir,
          flags: { ...NO_SANDBOX, idle: "0" },
        });
        const clients = viewers.get(c.label)!;
        const attach = (from?: number) => Promise.all(clients.map((v) => v.attach(name, from)));
        const live = await attach();
        const t0 = performance.now();
        await control.call("session.send", { name, message: { v: 1, type: "input", data: "go\n" } });
        await Promise.all(live.map((v) => v.ended));
        const liveMs = Math.max(...live.map((v) => v.end)) - t0;
        // Catch-up, CATCHUPS times over (a remote attach sends at most 8 MiB of log: the log is smaller).
        let catchMs = 0;
        let caught: Count[] = [];
        for (let k = 0; k < CATCHUPS; k++) {
          const t1 = performance.now();
          caught = await attach(0);
          await Promise.all(caught.map((v) => v.ended));
          catchMs += Math.max(...caught.map((v) => v.end)) - t1;
        }
        catchMs /= CATCHUPS;
        const result = results.get(c.label)!;
        for (const v of [...live, ...caught]) {
          if (v.bytes < bytes) throw new Error(`${c.label}: a client got ${v.bytes} of ${bytes} bytes`);
        }
        result.live.push(bytes / 1e6 / (liveMs / 1000));
        result.liveFps.push(live[0]!.frames / (liveMs / 1000));
        result.catchup.push(bytes / 1e6 / (catchMs / 1000));
        result.catchupFps.push(caught[0]!.frames / (catchMs / 1000));
        if (c.transport === "ws") result.ratio.push(caught[0]!.wire / Math.max(1, caught[0]!.bytes));
        say(
          `round ${r + 1}/${rounds} ${c.label}: live ${(bytes / 1e6 / (liveMs / 1000)).toFixed(1)} MB/s, ` +
            `catch-up ${(bytes / 1e6 / (catchMs / 1000)).toFixed(1)} MB/s per client`,
        );
        await control.call("session.kill", { name, purge: true });
      }
    }
    control.close();
    for (const clients of viewers.values()) for (const v of clients) v.close();
    // Each WebSocket contestant against the unix socket with as many clients, in the same run.
    const baseOf = (c: Contestant) =>
      results.get(c.viewers === 1 ? CONTESTANTS[0]!.label : "unix socket, 10 clients")!;
    const rows: string[][] = [[
      "transport",
      "live MB/s",
      "live frames/s",
      "catch-up MB/s",
      "catch-up frames/s",
      "catch-up, all clients",
      "vs unix (catch-up)",
      "wire/payload",
    ]];
    const out: Record<string, unknown> = {};
    for (const c of CONTESTANTS) {
      const r = results.get(c.label)!;
      const catchup = stats(r.catchup).median;
      const ratio = catchup / stats(baseOf(c).catchup).median;
      const wire = r.ratio.length > 0 ? stats(r.ratio).median : null;
      rows.push([
        c.label,
        stats(r.live).median.toFixed(1),
        Math.round(stats(r.liveFps).median).toString(),
        catchup.toFixed(1),
        Math.round(stats(r.catchupFps).median).toString(),
        `${(catchup * c.viewers).toFixed(1)} MB/s`,
        ratio.toFixed(2),
        wire === null ? "-" : wire.toFixed(3),
      ]);
      out[c.label] = {
        live_mbps: round(stats(r.live).median, 1),
        live_fps: Math.round(stats(r.liveFps).median),
        catchup_mbps: round(stats(r.catchup).median, 1),
        catchup_fps: Math.round(stats(r.catchupFps).median),
        catchup_mbps_all_clients: round(catchup * c.viewers, 1),
        catchup_vs_unix: round(ratio, 2),
        wire_per_payload: wire === null ? null : round(wire, 3),
        catchup_mbps_rounds: r.catchup.map((v) => round(v, 1)),
      };
    }
    say();
    say(table(rows));
    const zstd1 = stats(results.get("WebSocket, 1 viewer, zstd")!.catchup).median;
    if (!(zstd1 > ACCEPT_ZSTD_MBPS)) {
      failures.push(
        `WebSocket with zstd ${zstd1.toFixed(1)} MB/s <= ${ACCEPT_ZSTD_MBPS} MB/s (catch-up, 1 viewer)`,
      );
    }
    return finish({
      benchmark: "remote",
      date: new Date().toISOString(),
      payload_bytes: bytes,
      rounds,
      unit: "10^6 bytes of the program's output per second, per client",
      results: out,
      acceptance: { zstd_mbps_min: ACCEPT_ZSTD_MBPS },
    }, failures);
  } finally {
    daemon.kill("SIGTERM");
    await daemon.status;
    // Its keeper outlives it by design: this run's goes too.
    try {
      Deno.kill(keeperPid(stateDir), "SIGTERM");
    } catch {
      // None runs (it never started, or it is gone).
    }
    Deno.removeSync(dir, { recursive: true });
  }
}

if (import.meta.main) await runBenchmark("remote", main);
