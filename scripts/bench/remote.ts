/**
 * `deno task bench:remote`: frames per second and MB/s from a daemon to its clients, over the unix socket
 * (the baseline, measured in the same run) and over the WebSocket to 1 and to 10 viewers, each without and
 * with zstd, and the byte ratio zstd achieves on the workload.
 *
 * Workload: 24 MB of a build log with colours (a fixed-seed generator: the same bytes in every run), printed
 * by `cat` in a session without a sandbox (the transport is measured, not the sandbox). Two phases:
 *
 * - **live**: every client attached before the program starts; from `go` to each client's `session.end`.
 *   The terminal itself (the PTY) bounds this rate; the question is whether a transport keeps up with it.
 * - **catch-up**: clients attach from seq 0 to the ended session: the daemon reads its log and sends it as
 *   fast as the transport and the client take it (the transport's own rate).
 *
 * MB/s counts the program's output bytes (the frames' payload) per client, 10^6 bytes per second. The clients
 * run in this process (parsing every frame, as a program would), on the same 2 cores as the daemon; each
 * WebSocket row is compared with the unix socket with as many clients.
 *
 *   deno task bench:remote [--rounds 3] [--mb 24]
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
  MAIN_TS,
  round,
  runBenchmark,
  say,
  stats,
  table,
  xorshift32,
} from "./_common.ts";

/** The brief's figure for compressed streaming. */
const ACCEPT_ZSTD_MBPS = 40;
const NO_SANDBOX = { sandbox: "none", "unsafe-no-sandbox": true, "ack-no-network-enforcement": true };

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

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

function counter(): { count: Count; line: (text: string) => void; done: () => void } {
  const { promise, resolve } = Promise.withResolvers<void>();
  const count: Count = { frames: 0, bytes: 0, wire: 0, end: 0, ended: promise };
  return {
    count,
    line: (text: string) => {
      const message = JSON.parse(text);
      if (message.method === "frame") {
        const frame = message.params.frame;
        count.frames++;
        if (frame.type === "stdout") count.bytes += frame.data.length;
      } else if (message.method === "session.end") {
        count.end = performance.now();
        resolve();
      }
    },
    done: () => resolve(),
  };
}

/** A viewer on the WebSocket (as a program would be: JSON-RPC over text or zstd messages). */
async function wsViewer(
  url: string,
  token: string,
  zstd: boolean,
  name: string,
  from?: number,
): Promise<Count> {
  const socket = new WebSocket(url, ["specter.v1", `specter.token.${token}`]);
  socket.binaryType = "arraybuffer";
  await new Promise<void>((resolve, reject) => {
    socket.onopen = () => resolve();
    socket.onerror = () => reject(new Error("refused"));
  });
  const { count, line } = counter();
  const decoder = new TextDecoder();
  let answered = 0;
  const answers: (() => void)[] = [];
  socket.onmessage = (event) => {
    let text: string;
    if (typeof event.data === "string") {
      text = event.data;
      count.wire += text.length;
    } else {
      const bytes = new Uint8Array(event.data as ArrayBuffer);
      count.wire += bytes.length;
      text = decoder.decode(zstdDecompressSync(bytes));
    }
    for (const part of text.split("\n")) {
      if (part === "") continue;
      if (part.includes('"id":')) {
        answered++;
        answers.shift()?.();
        continue;
      }
      line(part);
    }
  };
  const call = (id: number, method: string, params: unknown) =>
    new Promise<void>((resolve) => {
      answers.push(resolve);
      socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  await call(1, "daemon.hello", { protocol: 1, compress: zstd ? "zstd" : "none" });
  await call(2, "session.attach", { name, control: false, ...(from === undefined ? {} : { from }) });
  void count.ended.then(() => socket.close());
  void answered;
  return count;
}

/** The baseline: a client on the unix socket. */
async function unixViewer(socket: string, name: string, from?: number): Promise<Count> {
  const client = await DaemonClient.connect({ socketPath: socket });
  const { count } = counter();
  const { promise, resolve } = Promise.withResolvers<void>();
  count.ended = promise;
  client.onNotification = (method, params) => {
    if (method === "frame") {
      count.frames++;
      const frame = params.frame as { type: string; data?: string };
      if (frame.type === "stdout") count.bytes += frame.data!.length;
    } else if (method === "session.end") {
      count.end = performance.now();
      resolve();
    }
  };
  await client.call("session.attach", { name, control: false, ...(from === undefined ? {} : { from }) });
  void promise.then(() => client.close());
  return count;
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
  const { rounds, mb } = intFlags(Deno.args, { rounds: 3, mb: 24 });
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
        const attach = (from?: number) =>
          Promise.all(
            Array.from({ length: c.viewers }, () =>
              c.transport === "unix"
                ? unixViewer(socket, name, from)
                : wsViewer(wsUrl, info!.viewer_token, c.zstd, name, from)),
          );
        const live = await attach();
        const t0 = performance.now();
        await control.call("session.send", { name, message: { v: 1, type: "input", data: "go\n" } });
        await Promise.all(live.map((v) => v.ended));
        const liveMs = Math.max(...live.map((v) => v.end)) - t0;
        const t1 = performance.now();
        const caught = await attach(0);
        await Promise.all(caught.map((v) => v.ended));
        const catchMs = Math.max(...caught.map((v) => v.end)) - t1;
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
    for (const entry of Deno.readDirSync("/proc")) {
      if (!/^\d+$/.test(entry.name)) continue;
      try {
        const cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).split("\0");
        if (cmdline.includes("keeper") && cmdline.includes(stateDir)) {
          Deno.kill(Number(entry.name), "SIGTERM");
        }
      } catch {
        // Gone meanwhile.
      }
    }
    Deno.removeSync(dir, { recursive: true });
  }
}

if (import.meta.main) await runBenchmark("remote", main);
