/**
 * Network benchmark (issue 26): a download from a loopback HTTP server through Specter's egress proxy
 * (`--allow-net`, sandboxed: the program's connection goes through the relay in the sandbox's network
 * namespace and the proxy outside) against the same download direct (`--unsafe-no-sandbox`), in the same
 * run, interleaved over `--rounds` rounds.
 *
 * - server: a Deno process serving `--mb` MB (1 MiB chunks from memory) on 127.0.0.1:PORT;
 * - client: `curl -s -o /dev/null -w '%{speed_download}'` run by `specter exec` (curl's own figure: the
 *   transfer only, start-up excluded);
 * - CPU: user + system time of the whole `specter exec` tree (Specter and its proxy, bwrap, curl: every
 *   process is waited for, so it shows in this process's cutime/cstime), minus the same command's for a
 *   1 MB download (start-up), per MiB moved. The proxy's cost is the difference between the two paths.
 *
 * - forwarder (when `socat` is installed): the same unsandboxed curl through a plain C port forwarder
 *   (`socat -b 1048576`, read/write with a 1 MiB buffer) in front of the server: what any process that
 *   copies the bytes once more costs on this machine, so the proxy's own overhead can be told apart from
 *   the cost of a third busy process on two cores.
 *
 *   deno run -A scripts/bench/net.ts [--rounds 3] [--mb 200]
 *
 * Goal (issue 26): proxy throughput ≥ 0.7 × direct. Run it on a quiet machine.
 *
 * @module
 */
import {
  DENO,
  finish,
  hasProgram,
  intFlags,
  MAIN_TS,
  median,
  ROOT,
  round,
  runBenchmark,
  say,
  table,
} from "./_common.ts";

const GOAL_RATIO = 0.7;

const SERVER = `const size = Number(Deno.args[0]);
const chunk = new Uint8Array(1 << 20).fill(120);
const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: ({ port }) => console.log(port) }, (request) => {
  const mb = Number(new URL(request.url).searchParams.get("mb") ?? size);
  let sent = 0;
  const body = new ReadableStream({
    pull(controller) {
      if (sent >= mb) return controller.close();
      sent++;
      controller.enqueue(chunk);
    },
  });
  return new Response(body, { headers: { "content-length": String(mb * chunk.length) } });
});
await server.finished;
`;

/** This process's reaped children's CPU seconds (user + system; fields 16 and 17 of /proc/self/stat). */
function childrenCpu(): number {
  const stat = Deno.readTextFileSync("/proc/self/stat");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[13]) + Number(fields[14])) / 100; // USER_HZ is 100 on Linux.
}

const MODES = ["proxy", "direct", "forwarder"] as const;
type Mode = typeof MODES[number];

interface Sample {
  readonly mbps: number;
  readonly cpuPerMb: number;
}

/** One `specter exec` of curl fetching `mb` MB: curl's rate, and the whole tree's CPU seconds. */
async function fetchOnce(
  mode: Mode,
  ports: Ports,
  mb: number,
): Promise<{ bytesPerSecond: number; cpu: number }> {
  const port = mode === "forwarder" ? ports.forwarder! : ports.server;
  const curl = [
    "curl",
    "-sS",
    "-o",
    "/dev/null",
    "-w",
    "%{speed_download}",
    `http://${mode === "forwarder" ? "127.0.0.1" : "localhost"}:${port}/blob?mb=${mb}`,
  ];
  const flags = mode === "proxy"
    ? ["--allow-net", `localhost:${port}`, "--ack-network"]
    : ["--unsafe-no-sandbox", "--ack-no-network-enforcement"];
  const before = childrenCpu();
  const out = await new Deno.Command(DENO, {
    args: ["run", "-A", MAIN_TS, "exec", "--timeout", "300s", ...flags, "--", ...curl],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const cpu = childrenCpu() - before;
  const result = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    exit_code: number | null;
    output: string;
  };
  if (result.exit_code !== 0) {
    throw new Error(
      `${mode}: curl failed: ${result.output.slice(0, 300)} ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  return { bytesPerSecond: Number(result.output.trim()), cpu };
}

/**
 * The rate of a `mb` download, and its CPU per MiB moved: the CPU of the same command fetching 1 MB is
 * taken off first (start-up of Specter, bwrap and curl, the same for any size).
 */
async function download(mode: Mode, ports: Ports, mb: number): Promise<Sample> {
  const small = await fetchOnce(mode, ports, 1);
  const big = await fetchOnce(mode, ports, mb);
  return {
    mbps: big.bytesPerSecond / 1e6,
    cpuPerMb: ((big.cpu - small.cpu) * 1000) / ((mb - 1) * 1e6 / 1048576),
  };
}

/** The server's port, and the C forwarder's in front of it (null: socat is not installed). */
interface Ports {
  readonly server: number;
  readonly forwarder: number | null;
}

/** A free loopback port (taken and given back: socat cannot report a port it chose). */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Starts `socat` forwarding a loopback port to `port`, once it listens; null when socat is missing. */
async function startForwarder(port: number): Promise<{ port: number; process: Deno.ChildProcess } | null> {
  if (!(await hasProgram("socat"))) return null;
  const listen = freePort();
  const process = new Deno.Command("socat", {
    args: ["-b", "1048576", `TCP-LISTEN:${listen},bind=127.0.0.1,fork,reuseaddr`, `TCP:127.0.0.1:${port}`],
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  for (let tries = 0; tries < 100; tries++) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port: listen })).close();
      return { port: listen, process };
    } catch {
      // Not listening yet.
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  process.kill("SIGTERM");
  await process.status;
  throw new Error("socat did not listen within 2 s");
}

async function main(): Promise<number> {
  const flags = intFlags(Deno.args, { rounds: 3, mb: 200 });
  if (!(await hasProgram("curl"))) throw new Error("curl is required");
  const dir = await Deno.makeTempDir({ prefix: "specter-bench-net-" });
  await Deno.writeTextFile(`${dir}/server.ts`, SERVER);
  const server = new Deno.Command(DENO, {
    args: ["run", "--allow-net=127.0.0.1", `${dir}/server.ts`, String(flags.mb)],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = server.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const port = Number((await reader.read()).value?.trim());
  const forwarder = await startForwarder(port);
  const ports: Ports = { server: port, forwarder: forwarder?.port ?? null };
  const modes = MODES.filter((mode) => mode !== "forwarder" || forwarder !== null);
  try {
    const results: Record<Mode, Sample[]> = { proxy: [], direct: [], forwarder: [] };
    for (let r = 0; r < flags.rounds; r++) {
      const order = r % 2 === 0 ? modes : [...modes].reverse();
      for (const mode of order) results[mode].push(await download(mode, ports, flags.mb));
    }
    const mbps = (mode: Mode) => median(results[mode].map((s) => s.mbps));
    const cpu = (mode: Mode) => median(results[mode].map((s) => s.cpuPerMb));
    const ratio = mbps("proxy") / mbps("direct");
    say(`${flags.mb} MB from a loopback server, ${flags.rounds} rounds each, interleaved`);
    say(table([
      ["path", "MB/s (median)", "per round", "CPU ms per MiB (whole tree, start-up off)"],
      ...modes.map((mode) => [
        mode,
        round(mbps(mode), 1).toString(),
        results[mode].map((s) => round(s.mbps, 1)).join(" "),
        round(cpu(mode), 2).toString(),
      ]),
    ]));
    say(`proxy / direct throughput: ${round(ratio, 2)}x (goal >= ${GOAL_RATIO}x)`);
    say(`proxy's extra CPU: ${round(cpu("proxy") - cpu("direct"), 2)} ms per MiB`);
    if (forwarder !== null) {
      say(
        `C forwarder (socat) / direct: ${round(mbps("forwarder") / mbps("direct"), 2)}x; ` +
          `proxy / C forwarder: ${round(mbps("proxy") / mbps("forwarder"), 2)}x`,
      );
    } else say("socat is not installed: no C forwarder reference");
    const failures = ratio >= GOAL_RATIO
      ? []
      : [`proxy throughput ${round(ratio, 2)}x direct < ${GOAL_RATIO}x`];
    return finish({
      benchmark: "net",
      mb: flags.mb,
      rounds: flags.rounds,
      proxy_mbps: round(mbps("proxy"), 1),
      direct_mbps: round(mbps("direct"), 1),
      ratio: round(ratio, 3),
      proxy_cpu_ms_per_mib: round(cpu("proxy"), 3),
      direct_cpu_ms_per_mib: round(cpu("direct"), 3),
      forwarder_mbps: forwarder === null ? null : round(mbps("forwarder"), 1),
      forwarder_ratio: forwarder === null ? null : round(mbps("forwarder") / mbps("direct"), 3),
    }, failures);
  } finally {
    if (forwarder !== null) {
      forwarder.process.kill("SIGTERM");
      await forwarder.process.status;
    }
    server.kill("SIGTERM");
    await server.status;
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await runBenchmark("net", main);
