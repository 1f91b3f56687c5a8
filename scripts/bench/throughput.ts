/**
 * Throughput benchmark: `cat` of a generated 10^8-byte text file through a PTY into a pipe.
 *
 * Contestants, each run as `sh -c '<cmd> | cat >/dev/null'` so every one pays the same pipe cost:
 * - specter: `deno run -A main.ts run --unsafe-no-sandbox --ack-no-network-enforcement --idle 0 -- cat FILE` (NDJSON frames)
 * - script:  util-linux `script -qfc "cat FILE" /dev/null` (the baseline of the ratio)
 * - python:  `pty.fork()` + `os.read` loop writing raw bytes to stdout
 *
 * Wall time covers the whole pipeline, process start-up included (Deno ≈ 50 ms, python ≈ 20 ms).
 * MB/s uses MB = 10^6 bytes of the input file. Rounds are interleaved (rotating order) so that a slow
 * phase of the machine hits every contestant. Outside the timing, the specter stream is decoded once
 * and its stdout payload must be exactly the file plus one `\r` per line (the terminal's `\n` → `\r\n`).
 *
 *   deno run -A scripts/bench/throughput.ts [--rounds 5] [--bytes 100000000]
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
  roundStats,
  runBenchmark,
  say,
  SPECTER_RUN,
  type Stats,
  stats,
  table,
  xorshift32,
} from "./_common.ts";

/** Every generated line has this many bytes, newline included (so the line count is bytes / 100). */
const LINE_BYTES = 100;
const ACCEPT_RATIO = 0.85;
const ACCEPT_MBPS = 45;

const PYTHON_READER = `import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp("cat", ["cat", sys.argv[1]])
out = sys.stdout.fileno()
while True:
    try:
        data = os.read(fd, 65536)
    except OSError:  # EIO: every holder of the slave side closed it
        break
    if not data:
        break
    view = memoryview(data)
    while view:
        view = view[os.write(out, view):]
os.waitpid(pid, 0)
`;

/** One program under test. */
interface Contestant {
  readonly name: string;
  /** Shell command; `$FILE`, `$DENO_BIN`, `$MAIN_TS` and `$PY_READER` come from the environment. */
  readonly shell: string;
}

const CONTESTANTS: readonly Contestant[] = [
  {
    name: "specter",
    shell:
      '"$DENO_BIN" run -A "$MAIN_TS" run --unsafe-no-sandbox --ack-no-network-enforcement --idle 0 -- cat "$FILE" 2>/dev/null',
  },
  { name: "script", shell: `script -qfc 'cat "$FILE"' /dev/null` },
  { name: "python", shell: 'python3 "$PY_READER" "$FILE"' },
];

/** Writes `bytes` bytes of printable-ASCII lines (fixed seed) to `path`; returns the line count. */
async function generate(path: string, bytes: number): Promise<number> {
  const random = xorshift32(0x5eed);
  const linesPerBlock = 10_000;
  const block = new Uint8Array(linesPerBlock * LINE_BYTES);
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  try {
    for (let written = 0; written < bytes; written += block.length) {
      for (let i = 0; i < block.length; i++) {
        // 95 printable characters (0x20–0x7e); the last byte of each line is the newline.
        block[i] = i % LINE_BYTES === LINE_BYTES - 1 ? 0x0a : 0x20 + (random() % 95);
      }
      const chunk = block.subarray(0, Math.min(block.length, bytes - written));
      for (let off = 0; off < chunk.length;) off += await file.write(chunk.subarray(off));
    }
  } finally {
    file.close();
  }
  return bytes / LINE_BYTES;
}

/** Splits a byte stream into lines and hands each complete line to `onLine`. */
async function forEachLine(
  stream: ReadableStream<Uint8Array>,
  onLine: (line: string) => void,
): Promise<void> {
  let buffered = "";
  // The DOM library (in the graph through the viewer's xterm.js) types the decoder's input as BufferSource.
  for await (
    const text of stream.pipeThrough(new TextDecoderStream() as TransformStream<Uint8Array, string>)
  ) {
    buffered += text;
    let start = 0;
    for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n", start)) {
      onLine(buffered.slice(start, nl));
      start = nl + 1;
    }
    buffered = buffered.slice(start);
  }
  if (buffered !== "") onLine(buffered);
}

/** What the specter stream carried, decoded outside the timing. */
interface PayloadCheck {
  readonly payloadBytes: number;
  readonly stdoutFrames: number;
  readonly exitCode: number | null;
  readonly exitOutputBytes: number | null;
}

/** Runs specter once with its NDJSON on a pipe and sums the UTF-8 bytes of every `stdout` payload. */
async function checkSpecterPayload(file: string): Promise<PayloadCheck> {
  const child = new Deno.Command(DENO, {
    args: [...SPECTER_RUN.slice(1), "cat", file],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const encoder = new TextEncoder();
  let payloadBytes = 0;
  let stdoutFrames = 0;
  let exitCode: number | null = null;
  let exitOutputBytes: number | null = null;
  await forEachLine(child.stdout, (line) => {
    const frame = JSON.parse(line) as
      & { type: string; data?: string; binary?: boolean }
      & Record<string, unknown>;
    if (frame.type === "stdout" && typeof frame.data === "string") {
      stdoutFrames++;
      // Binary frames carry base64; count the bytes they stand for.
      payloadBytes += frame.binary === true ? atob(frame.data).length : encoder.encode(frame.data).length;
    } else if (frame.type === "exit") {
      exitCode = typeof frame.code === "number" ? frame.code : null;
      exitOutputBytes = typeof frame.output_bytes === "number" ? frame.output_bytes : null;
    }
  });
  await child.status;
  return { payloadBytes, stdoutFrames, exitCode, exitOutputBytes };
}

/** Runs a contestant once with its output counted instead of discarded (sanity check of the baselines). */
async function countOutput(contestant: Contestant, env: Record<string, string>): Promise<number> {
  const child = new Deno.Command("sh", {
    args: ["-c", `${contestant.shell} </dev/null`],
    cwd: ROOT,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  let bytes = 0;
  for await (const chunk of child.stdout) bytes += chunk.length;
  await child.status;
  return bytes;
}

/** One timed run: wall ms and the CPU seconds (user + system) of the whole pipeline. */
interface Sample {
  readonly ms: number;
  readonly cpuSeconds: number;
}

/** Times one contestant: `sh -c '<cmd> </dev/null | cat >/dev/null'` under `/usr/bin/time`. */
async function timeOnce(
  contestant: Contestant,
  env: Record<string, string>,
  timeFile: string,
): Promise<Sample> {
  const pipeline = `${contestant.shell} </dev/null | cat >/dev/null`;
  const start = performance.now();
  const output = await new Deno.Command("/usr/bin/time", {
    args: ["-f", "%U %S", "-o", timeFile, "sh", "-c", pipeline],
    cwd: ROOT,
    env,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  const ms = performance.now() - start;
  if (!output.success) {
    throw new Error(`${contestant.name} failed (${output.code}): ${new TextDecoder().decode(output.stderr)}`);
  }
  const [user, system] = (await Deno.readTextFile(timeFile)).trim().split(/\s+/).slice(-2).map(Number);
  return { ms, cpuSeconds: (user ?? Number.NaN) + (system ?? Number.NaN) };
}

async function main(): Promise<number> {
  const flags = intFlags(Deno.args, { rounds: 5, bytes: 100_000_000 });
  if (flags.bytes % LINE_BYTES !== 0) throw new Error(`--bytes must be a multiple of ${LINE_BYTES}`);
  for (const program of ["script", "python3", "cat", "/usr/bin/time"]) {
    if (!(await hasProgram(program))) throw new Error(`Missing required program: ${program}`);
  }
  const dir = await Deno.makeTempDir({ prefix: "specter-bench-throughput-" });
  try {
    const file = `${dir}/input.txt`;
    const pyReader = `${dir}/pty_reader.py`;
    await Deno.writeTextFile(pyReader, PYTHON_READER);
    say(`throughput: generating ${flags.bytes} bytes of printable ASCII lines in ${dir}`);
    const lines = await generate(file, flags.bytes);
    const expectedPayload = flags.bytes + lines; // The terminal turns each "\n" into "\r\n".
    const env = { FILE: file, DENO_BIN: DENO, MAIN_TS, PY_READER: pyReader };

    // Integrity first (outside the timing); these runs also warm the page cache and Deno's module cache.
    const check = await checkSpecterPayload(file);
    const payloadOk = check.payloadBytes === expectedPayload && check.exitCode === 0 &&
      check.exitOutputBytes === expectedPayload;
    say(
      `check: specter stdout payload ${check.payloadBytes} bytes in ${check.stdoutFrames} frames ` +
        `(expected ${expectedPayload} = ${flags.bytes} + ${lines} CRs), exit code ${check.exitCode}, ` +
        `exit.output_bytes ${check.exitOutputBytes} → ${payloadOk ? "OK" : "MISMATCH"}`,
    );
    const baselineBytes: Record<string, number> = {};
    for (const contestant of CONTESTANTS.slice(1)) {
      baselineBytes[contestant.name] = await countOutput(contestant, env);
      const ok = baselineBytes[contestant.name] === expectedPayload;
      say(
        `check: ${contestant.name} wrote ${baselineBytes[contestant.name]} bytes → ${ok ? "OK" : "MISMATCH"}`,
      );
    }

    const samples = new Map<string, Sample[]>(CONTESTANTS.map((c) => [c.name, []]));
    const pairedRatios: number[] = []; // specter ÷ script within the same round: less exposed to drift.
    const timeFile = `${dir}/time.txt`;
    for (let r = 0; r < flags.rounds; r++) {
      // Rotate the order every round so no contestant always runs first (or right after another).
      const order = CONTESTANTS.map((_, i) => CONTESTANTS[(i + r) % CONTESTANTS.length]!);
      const parts: string[] = [];
      for (const contestant of order) {
        const sample = await timeOnce(contestant, env, timeFile);
        samples.get(contestant.name)!.push(sample);
        parts.push(`${contestant.name} ${(flags.bytes / 1e3 / sample.ms).toFixed(1)} MB/s`);
      }
      const last = (name: string) => samples.get(name)!.at(-1)!.ms;
      pairedRatios.push(last("script") / last("specter"));
      say(
        `round ${r + 1}/${flags.rounds}: ${parts.join(", ")}; specter/script ${
          pairedRatios.at(-1)!.toFixed(2)
        }`,
      );
    }

    const summary: Record<string, { mbps: Stats; wall_ms: Stats; cpu_s_median: number }> = {};
    for (const [name, list] of samples) {
      summary[name] = {
        mbps: roundStats(stats(list.map((s) => flags.bytes / 1e3 / s.ms)), 1),
        wall_ms: roundStats(stats(list.map((s) => s.ms)), 0),
        cpu_s_median: round(stats(list.map((s) => s.cpuSeconds)).median, 2),
      };
    }
    const specter = summary.specter!.mbps.median;
    const ratio = specter / summary.script!.mbps.median;
    const ratioPython = specter / summary.python!.mbps.median;
    say();
    say(table([
      ["contestant", "MB/s median", "min–max", "wall ms median", "CPU-s median (pipeline)"],
      ...Object.entries(summary).map(([name, s]) => [
        name,
        s.mbps.median.toFixed(1),
        `${s.mbps.min.toFixed(1)}–${s.mbps.max.toFixed(1)}`,
        s.wall_ms.median.toFixed(0),
        s.cpu_s_median.toFixed(2),
      ]),
    ]));
    say(
      `ratio specter / script = ${ratio.toFixed(2)} (target ≥ ${ACCEPT_RATIO}); ` +
        `specter / python = ${ratioPython.toFixed(2)}; specter ${
          specter.toFixed(1)
        } MB/s (target ≥ ${ACCEPT_MBPS})`,
    );

    const failures: string[] = [];
    if (!payloadOk) {
      failures.push(
        `specter payload ${check.payloadBytes} bytes (exit ${check.exitCode}), expected ${expectedPayload}`,
      );
    }
    if (!(ratio >= ACCEPT_RATIO)) failures.push(`ratio ${ratio.toFixed(2)} < ${ACCEPT_RATIO}`);
    if (!(specter >= ACCEPT_MBPS)) failures.push(`specter ${specter.toFixed(1)} MB/s < ${ACCEPT_MBPS} MB/s`);
    return finish({
      benchmark: "throughput",
      date: new Date().toISOString(),
      bytes: flags.bytes,
      lines,
      rounds: flags.rounds,
      unit: "MB/s (10^6 bytes of input per second, wall time of the whole pipeline)",
      payload_check: { ...check, expected: expectedPayload, ok: payloadOk, baseline_bytes: baselineBytes },
      specter: summary.specter,
      baseline: { script: summary.script, python: summary.python },
      ratio: round(ratio, 3),
      ratio_vs_python: round(ratioPython, 3),
      ratio_per_round: pairedRatios.map((x) => round(x, 3)),
      ratio_per_round_median: round(median(pairedRatios), 3),
      acceptance: { ratio_min: ACCEPT_RATIO, mbps_min: ACCEPT_MBPS },
    }, failures);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await runBenchmark("throughput", main);
