/**
 * Terminal-model benchmark: output throughput with the screen model on, against node-pty +
 * `@xterm/headless` under Node measured in the same run, and snapshot latency once output settled.
 *
 * - **Throughput, specter:** in this process, `spawn({ argv: ["cat", FILE], screen: true })` without a
 *   sandbox. The clock runs from just before `spawn()` until every frame up to `exit` was consumed and
 *   `await session.screen()` returned (so the model has parsed everything). The model is fed as the
 *   library feeds it: writes are not awaited, and reading pauses above the high watermark of unparsed
 *   output (`src/terminal/watermarks.ts`).
 * - **Throughput, baseline:** `scripts/bench/node_xterm/bench.mjs`, a long-lived Node process: node-pty
 *   spawns the same `cat FILE`, every chunk goes into a headless Terminal with the options Specter's
 *   `TerminalModel` uses (80x24, scrollback 0, unicode11), with the same watermarks driving
 *   `pause()`/`resume()`, and the clock stops when the write callback after the exit has run. node-pty
 *   loses the tail of a program's output when it exits (microsoft/node-pty#72), so the baseline holds
 *   the terminal's slave side open until all expected output arrived (see bench.mjs).
 * - **Input:** N bytes (default 2·10^7) of generated terminal output, fixed seed: log lines with SGR
 *   colours (16, 256 and true colour), `ls`- and diff-like lines, progress bars redrawn with `\r` and
 *   `ESC [K`, lines that wrap at 80 columns, and some UTF-8 (accents, box drawing, CJK wide characters).
 *   MB = 10^6 bytes of that file.
 * - **Checks:** every Specter round must carry exactly the file plus one `\r` per line
 *   (`exit.output_bytes`), every baseline round the same number of UTF-16 units, and both sides must end
 *   with the same screen lines.
 * - **Snapshot latency:** `sh -c 'cat FILE; exec sleep 600'` of a 64 KB file of the same kind, on an
 *   80x24 and a 200x50 terminal; after the `idle` frame (200 ms without output) `await session.screen()`
 *   is timed `--snapshots` times (also with `cells: true`). The baseline times the same reading of its
 *   buffer (right-trimmed lines, cursor, buffer type), synchronously.
 *
 * The Node side is installed on demand with `npm ci` into `bench-out/node_xterm` (gitignored). When that
 * fails (for instance node-pty's native build), the output and the JSON say so (`baseline: null`) and
 * the benchmark fails: the goal cannot be checked.
 *
 *   deno run -A scripts/bench/terminal.ts [--rounds 5] [--bytes 20000000] [--snapshots 200]
 *
 * @module
 */
import { cpuUsage } from "node:process";
import { spawn } from "../../src/mod.ts";
import type { Session } from "../../src/mod.ts";
import { defaultEnv } from "../../src/session/options.ts";
import { HIGH_WATERMARK, LOW_WATERMARK } from "../../src/terminal/watermarks.ts";
import {
  capture,
  finish,
  hasProgram,
  intFlags,
  median,
  ROOT,
  round,
  roundStats,
  runBenchmark,
  say,
  type Stats,
  stats,
  table,
  xorshift32,
} from "./_common.ts";

const ACCEPT_RATIO = 1.0;
/** Specter's default terminal size, used by the throughput rounds on both sides. */
const COLS = 80;
const ROWS = 24;
/** `TerminalModel` keeps no scrollback unless asked, and sessions do not ask. */
const SCROLLBACK = 0;
const SNAPSHOT_FILE_BYTES = 64_000;
const SNAPSHOT_SIZES: readonly (readonly [number, number])[] = [[80, 24], [200, 50]];
/** Output must have been quiet this long before snapshots are timed (Specter's default `idle`). */
const IDLE_MS = 200;
/** No generated line is longer than this many bytes (the file ends with one padding line shorter). */
const MAX_LINE_BYTES = 1024;
const NO_SANDBOX = { mode: "none", acknowledge: "unsafe-no-sandbox" } as const;
const OUT_DIR = `${ROOT}/bench-out/terminal`;
const NODE_SRC = `${ROOT}/scripts/bench/node_xterm`;
const NODE_DIR = `${ROOT}/bench-out/node_xterm`;

// ── input ─────────────────────────────────────────────────────────────────────────────────────────

/** What a generated file holds. */
interface Input {
  readonly path: string;
  readonly bytes: number;
  /** Newlines: the terminal turns each into `\r\n`. */
  readonly lines: number;
  /** UTF-16 code units of the file's text. */
  readonly units: number;
}

const WORDS = (
  "the build started compile src/session/session.ts warning unused variable ok request GET POST " +
  "/api/v1/items 200 404 latency ms cache miss hit worker thread queue flush token parse render frame " +
  "delta index commit merge branch main test passed failed skipped module package version error: note: " +
  "help: expected found value string number => { } ( ) [ ] = + - * / if else return const let async " +
  "await import export from node_modules target/release Cargo.toml deno.json 0x7ffd3a2c 42 3.14159 " +
  "--release --verbose retrying connection established closed user root pid 1337 signal SIGTERM"
).split(" ");
const UNICODE_WORDS = ["café", "naïve", "→", "✓", "✗", "—", "…", "°C", "µs", "│", "─", "日本語", "テスト"];
const LEVELS = [
  "\x1b[32mINFO\x1b[0m ",
  "\x1b[33mWARN\x1b[0m ",
  "\x1b[1;31mERROR\x1b[0m",
  "\x1b[36mDEBUG\x1b[0m",
];
const LS_COLOURS = ["01;34", "01;32", "01;36", "00", "00", "01;31", "35"];

/** UTF-8 length of `text` (the generator uses only characters of the Basic Multilingual Plane). */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
  }
  return bytes;
}

/** Makes lines of terminal output (newline included) from a fixed-seed generator. */
function lineMaker(seed: number): () => string {
  const random = xorshift32(seed);
  const pick = <T>(list: readonly T[]): T => list[random() % list.length]!;
  const words = (min: number, spread: number, pool: readonly string[] = WORDS): string => {
    const target = min + (random() % spread);
    let text = pick(pool);
    while (text.length < target) text += " " + pick(pool);
    return text;
  };
  let clock = 0;
  const time = (): string => {
    clock += random() % 5000;
    const ms = clock % 1000, s = Math.floor(clock / 1000) % 60, m = Math.floor(clock / 60000) % 60;
    return `12:${String(m).padStart(2, "0")}:${String(s).padStart(2, "0")}.${String(ms).padStart(3, "0")}`;
  };
  return () => {
    const kind = random() % 100;
    if (kind < 30) return words(10, 190) + "\n"; // Plain text; lines past 80 columns wrap.
    if (kind < 55) return `\x1b[2m${time()}\x1b[0m ${pick(LEVELS)} ${words(20, 80)}\n`;
    if (kind < 65) {
      const names: string[] = [];
      for (let n = 3 + random() % 6; n > 0; n--) names.push(`\x1b[${pick(LS_COLOURS)}m${pick(WORDS)}\x1b[0m`);
      return names.join("  ") + "\n";
    }
    if (kind < 75) {
      const sign = random() % 3;
      if (sign === 0) return `\x1b[36m@@ -${random() % 900},7 +${random() % 900},8 @@\x1b[m ${pick(WORDS)}\n`;
      return `\x1b[${sign === 1 ? "32m+" : "31m-"}${words(10, 70)}\x1b[m\n`;
    }
    if (kind < 82) {
      let text = "";
      for (let n = 2 + random() % 6; n > 0; n--) {
        text += random() % 2 === 0
          ? `\x1b[38;5;${random() % 256}m${pick(WORDS)}\x1b[39m `
          : `\x1b[38;2;${random() % 256};${random() % 256};${random() % 256}m${pick(WORDS)}\x1b[0m `;
      }
      return text + "\n";
    }
    if (kind < 90) {
      // A progress bar redrawn in place, as package managers and build tools do.
      let text = "";
      let done = 0;
      for (let n = 2 + random() % 4; n > 0; n--) {
        done = Math.min(20, done + 1 + random() % 8);
        const bar = "#".repeat(done) + ".".repeat(20 - done);
        text += `${text === "" ? "" : "\r\x1b[K"}\x1b[1m${pick(WORDS)}\x1b[0m [${bar}] ${done * 5}%`;
      }
      return text + "\n";
    }
    return words(10, 100, random() % 2 === 0 ? UNICODE_WORDS : WORDS) + " " + words(5, 40, UNICODE_WORDS) +
      "\n";
  };
}

/** Writes exactly `bytes` bytes of generated output to `path` (fixed seed: the same file every run). */
async function generate(path: string, bytes: number, seed: number): Promise<Input> {
  const next = lineMaker(seed);
  const encoder = new TextEncoder();
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  let remaining = bytes, lines = 0, units = 0;
  try {
    let block: string[] = [];
    let blockBytes = 0;
    const flush = async () => {
      const data = encoder.encode(block.join(""));
      for (let off = 0; off < data.length;) off += await file.write(data.subarray(off));
      block = [];
      blockBytes = 0;
    };
    const add = async (line: string, size: number) => {
      block.push(line);
      blockBytes += size;
      remaining -= size;
      lines++;
      units += line.length;
      if (blockBytes >= 1 << 20) await flush();
    };
    while (remaining > MAX_LINE_BYTES) {
      const line = next();
      const size = utf8Length(line);
      if (size > MAX_LINE_BYTES) throw new Error(`generated a ${size}-byte line`);
      await add(line, size);
    }
    // One last plain line pads the file to the exact size (so MB/s means the same for every --bytes).
    if (remaining > 0) await add(".".repeat(remaining - 1) + "\n", remaining);
    await flush();
  } finally {
    file.close();
  }
  return { path, bytes, lines, units };
}

// ── the Node baseline ─────────────────────────────────────────────────────────────────────────────

/** Reads `path`, or null when it does not exist. */
async function readOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch (error: unknown) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/**
 * Environment for `npm ci`: node-gyp downloads Node's headers unless told where they are, and this
 * machine reaches only the npm registry. Debian's nodejs package ships them in /usr/include/node, so
 * point there when they match the running `node` (an existing setting wins).
 */
async function npmEnv(): Promise<Record<string, string>> {
  if (Deno.env.get("npm_config_nodedir") !== undefined) return {};
  const header = await readOrNull("/usr/include/node/node_version.h");
  if (header === null) return {};
  const part = (name: string) => header.match(new RegExp(`#define NODE_${name}_VERSION (\\d+)`))?.[1];
  const headers = `${part("MAJOR")}.${part("MINOR")}.${part("PATCH")}`;
  const running = (await capture(["node", "-p", "process.versions.node"])).trim();
  return headers === running ? { npm_config_nodedir: "/usr" } : {};
}

/**
 * Installs the baseline into {@link NODE_DIR} when its pinned packages changed (or always with `force`);
 * returns why it failed, or null.
 */
async function installNodeBaseline(force = false): Promise<string | null> {
  for (const program of ["node", "npm"]) {
    if (!(await hasProgram(program))) return `${program} is not on PATH`;
  }
  await Deno.mkdir(NODE_DIR, { recursive: true });
  // Kept as package.pinned.json in the repository: a package.json there would make Deno treat the
  // folder as a separate project (its own fmt/lint settings) when tools are pointed at it.
  const pkg = await Deno.readTextFile(`${NODE_SRC}/package.pinned.json`);
  const lock = await Deno.readTextFile(`${NODE_SRC}/package-lock.json`);
  // The script is copied every run; the install is redone only when the pinned packages changed.
  await Deno.copyFile(`${NODE_SRC}/bench.mjs`, `${NODE_DIR}/bench.mjs`);
  const stampPath = `${NODE_DIR}/.installed`;
  if (!force && await readOrNull(stampPath) === pkg + lock) return null;
  await Deno.remove(stampPath).catch(() => {/* absent */});
  await Deno.writeTextFile(`${NODE_DIR}/package.json`, pkg);
  await Deno.writeTextFile(`${NODE_DIR}/package-lock.json`, lock);
  say(`node baseline: npm ci in ${NODE_DIR} (node-pty builds its native module with node-gyp)`);
  const output = await new Deno.Command("npm", {
    args: ["ci", "--no-audit", "--no-fund", "--loglevel=error"],
    cwd: NODE_DIR,
    env: await npmEnv(),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!output.success) {
    const log = new TextDecoder().decode(output.stderr).trim().split("\n").slice(-15).join("\n");
    return `npm ci failed (exit ${output.code}):\n${log}`;
  }
  await Deno.writeTextFile(stampPath, pkg + lock);
  return null;
}

/** Lines of a byte stream. */
async function* linesOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffered = "";
  // The DOM library (in the graph through the viewer's xterm.js) types the decoder's input as BufferSource.
  for await (
    const text of stream.pipeThrough(new TextDecoderStream() as TransformStream<Uint8Array, string>)
  ) {
    buffered += text;
    for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
      yield buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
    }
  }
  if (buffered !== "") yield buffered;
}

/** The first line bench.mjs prints. */
interface ReadyReply {
  readonly ready: boolean;
  readonly error?: string;
  readonly node?: string;
  readonly node_pty?: string;
  readonly xterm_headless?: string;
  readonly addon_unicode11?: string;
}

/** Every reply to a request. */
interface Reply {
  readonly ok: boolean;
  readonly error?: string;
}

/** Reply to a `throughput` request. */
interface ThroughputReply extends Reply {
  readonly ms: number;
  readonly cpu_ms: number;
  readonly units: number;
  readonly chunks: number;
  readonly pauses: number;
  readonly exit_code: number;
  readonly held_slave: boolean;
  readonly lines: string[];
}

/** Reply to a `snapshot` request. */
interface SnapshotReply extends Reply {
  readonly samples_ms: number[];
  readonly units: number;
  readonly lines: string[];
}

/** The running `node bench.mjs` (one request at a time). */
class NodeBaseline {
  readonly #child: Deno.ChildProcess;
  readonly #lines: AsyncGenerator<string>;
  readonly #stdin: WritableStreamDefaultWriter<Uint8Array>;
  /** What it said when it started (versions). */
  readonly info: ReadyReply;

  private constructor(child: Deno.ChildProcess, lines: AsyncGenerator<string>, info: ReadyReply) {
    this.#child = child;
    this.#lines = lines;
    this.#stdin = child.stdin.getWriter();
    this.info = info;
  }

  /** Starts it; throws with its own message when its modules do not load (e.g. node-pty unbuilt). */
  static async start(): Promise<NodeBaseline> {
    const child = new Deno.Command("node", {
      args: ["bench.mjs"],
      cwd: NODE_DIR,
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const lines = linesOf(child.stdout);
    const first = await lines.next();
    const info = first.done
      ? { ready: false, error: "exited without a word" }
      : JSON.parse(first.value) as ReadyReply;
    if (!info.ready) {
      await child.stdin.close().catch(() => {});
      await child.status;
      throw new Error(`node bench.mjs could not load its modules: ${info.error}`);
    }
    return new NodeBaseline(child, lines, info);
  }

  /** Sends one request and waits for its reply (throws on `ok: false`). */
  async request<T extends Reply>(request: Record<string, unknown>): Promise<T> {
    await this.#stdin.write(new TextEncoder().encode(JSON.stringify(request) + "\n"));
    const line = await this.#lines.next();
    if (line.done) throw new Error("node bench.mjs exited");
    const reply = JSON.parse(line.value) as T;
    if (!reply.ok) throw new Error(`node bench.mjs: ${reply.error}`);
    return reply;
  }

  /** Ends it (closing stdin ends its request loop). */
  async close(): Promise<void> {
    await this.#stdin.close().catch(() => {});
    await this.#child.status;
  }
}

// ── the specter side ──────────────────────────────────────────────────────────────────────────────

/** One throughput round of either side. */
interface Run {
  readonly ms: number;
  readonly cpuMs: number;
  /** Specter: bytes (`exit.output_bytes`); baseline: UTF-16 units received. */
  readonly output: number;
  readonly exitCode: number | null;
  readonly lines: readonly string[];
  /** Baseline only: times the pty was paused at the high watermark (Specter does not expose it). */
  readonly pauses?: number;
}

/** One Specter throughput round: spawn → every frame to `exit` consumed → `screen()` returned. */
async function specterThroughput(input: Input): Promise<Run> {
  const cpu0 = cpuUsage();
  const start = performance.now();
  const session = spawn({
    argv: ["cat", input.path],
    cols: COLS,
    rows: ROWS,
    screen: true,
    idleMs: 0,
    sandbox: NO_SANDBOX,
  });
  let output = -1;
  let exitCode: number | null = null;
  for await (const frame of session.frames()) {
    if (frame.type === "exit") {
      output = frame.output_bytes ?? -1;
      exitCode = frame.code;
    }
  }
  const screen = await session.screen(); // Resolves once the model parsed everything read.
  const ms = performance.now() - start;
  const cpu = cpuUsage(cpu0);
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, output, exitCode, lines: screen.lines };
}

function nodeRun(reply: ThroughputReply): Run {
  return {
    ms: reply.ms,
    cpuMs: reply.cpu_ms,
    output: reply.units,
    exitCode: reply.exit_code,
    lines: reply.lines,
    pauses: reply.pauses,
  };
}

/** Takes frames until one of `type` arrives (throws if the session ends first). */
async function waitFrame(session: Session, type: string): Promise<void> {
  for (;;) {
    const batch = await session.nextFrames();
    if (batch.length === 0) throw new Error(`the session ended before a "${type}" frame`);
    if (batch.some((frame) => frame.type === type)) return;
  }
}

/** Specter snapshot latency on a `cols`×`rows` terminal after output settled. */
async function specterSnapshots(
  input: Input,
  cols: number,
  rows: number,
  count: number,
): Promise<{ plain: number[]; cells: number[]; lines: readonly string[] }> {
  const session = spawn({
    argv: ["sh", "-c", 'cat "$1"; exec sleep 600', "sh", input.path],
    cols,
    rows,
    screen: true,
    idleMs: IDLE_MS,
    sandbox: NO_SANDBOX,
  });
  try {
    await waitFrame(session, "idle");
    await session.screen(); // The first call may still wait for parsing; the timed ones must not.
    const time = async (cells: boolean): Promise<number[]> => {
      const samples: number[] = [];
      for (let i = 0; i < count; i++) {
        const start = performance.now();
        await session.screen({ cells });
        samples.push(performance.now() - start);
      }
      return samples;
    };
    const plain = await time(false);
    const cells = await time(true);
    return { plain, cells, lines: (await session.screen()).lines };
  } finally {
    await session.terminate(0);
    while ((await session.nextFrames()).length > 0) { /* drain to the end */ }
  }
}

// ── main ──────────────────────────────────────────────────────────────────────────────────────────

function sameLines(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((line, i) => line === b[i]);
}

function mbps(input: Input, run: Run): number {
  return input.bytes / 1e3 / run.ms;
}

async function main(): Promise<number> {
  const flags = intFlags(Deno.args, { rounds: 5, bytes: 20_000_000, snapshots: 200 });
  if (flags.bytes <= MAX_LINE_BYTES) throw new Error(`--bytes must be more than ${MAX_LINE_BYTES}`);
  for (const program of ["cat", "sh"]) {
    if (!(await hasProgram(program))) throw new Error(`Missing required program: ${program}`);
  }
  await Deno.mkdir(OUT_DIR, { recursive: true });
  let node: NodeBaseline | null = null;
  try {
    say(`terminal: generating ${flags.bytes} bytes of coloured terminal output in ${OUT_DIR}`);
    const input = await generate(`${OUT_DIR}/input.txt`, flags.bytes, 0x7e57);
    const small = await generate(`${OUT_DIR}/screen.txt`, SNAPSHOT_FILE_BYTES, 0x5c2e);
    const expectedBytes = input.bytes + input.lines; // The terminal turns each "\n" into "\r\n".
    const expectedUnits = input.units + input.lines;
    say(`input: ${input.bytes} bytes, ${input.lines} lines, ${input.units} UTF-16 units`);

    let baselineError: string | null = null;
    // A second attempt reinstalls from scratch: an install that once worked may have been damaged since.
    for (const force of [false, true]) {
      try {
        baselineError = await installNodeBaseline(force);
        if (baselineError !== null) break;
        node = await NodeBaseline.start();
        break;
      } catch (error: unknown) {
        baselineError = error instanceof Error ? error.message : String(error);
        if (!force) say(`node baseline did not start (${baselineError.split("\n")[0]}); reinstalling`);
      }
    }
    if (node === null) say(`BASELINE UNAVAILABLE: ${baselineError}`);
    const baselineName = node === null
      ? null
      : `node-pty ${node.info.node_pty} + @xterm/headless ${node.info.xterm_headless} ` +
        `(+ addon-unicode11 ${node.info.addon_unicode11}) on Node ${node.info.node}`;
    if (baselineName !== null) say(`baseline: ${baselineName}`);

    const throughputRequest = {
      op: "throughput",
      file: input.path,
      cols: COLS,
      rows: ROWS,
      scrollback: SCROLLBACK,
      high: HIGH_WATERMARK,
      low: LOW_WATERMARK,
      expectedUnits,
      cwd: ROOT,
      env: defaultEnv(),
    };
    const runNode = async () => nodeRun(await node!.request<ThroughputReply>(throughputRequest));

    // One untimed round per side: loads xterm, warms the JIT of both processes and the page cache.
    const warmSpecter = await specterThroughput(input);
    const warmNode = node === null ? null : await runNode();
    const reference = warmSpecter.lines;
    const checks: string[] = [];
    const checkRun = (side: string, run: Run, expected: number) => {
      if (run.output !== expected || run.exitCode !== 0) {
        checks.push(`${side}: output ${run.output} (expected ${expected}), exit code ${run.exitCode}`);
      }
      if (!sameLines(run.lines, reference)) checks.push(`${side}: final screen differs from specter's first`);
    };
    checkRun("specter warm-up", warmSpecter, expectedBytes);
    if (warmNode !== null) checkRun("node warm-up", warmNode, expectedUnits);

    const specterRuns: Run[] = [];
    const nodeRuns: Run[] = [];
    const paired: number[] = [];
    for (let r = 0; r < flags.rounds; r++) {
      // Alternate which side goes first so a slow phase of the machine hits both.
      const sides = r % 2 === 0 ? ["specter", "node"] : ["node", "specter"];
      const parts: string[] = [];
      for (const side of sides) {
        if (side === "specter") {
          const run = await specterThroughput(input);
          specterRuns.push(run);
          checkRun(`specter round ${r + 1}`, run, expectedBytes);
          parts.push(`specter ${mbps(input, run).toFixed(1)} MB/s`);
        } else if (node !== null) {
          const run = await runNode();
          nodeRuns.push(run);
          checkRun(`node round ${r + 1}`, run, expectedUnits);
          parts.push(`node ${mbps(input, run).toFixed(1)} MB/s`);
        }
      }
      if (node !== null) paired.push(nodeRuns.at(-1)!.ms / specterRuns.at(-1)!.ms);
      say(
        `round ${r + 1}/${flags.rounds}: ${parts.join(", ")}` +
          (node === null ? "" : `; specter/node ${paired.at(-1)!.toFixed(2)}`),
      );
    }
    const checked = node === null
      ? "specter's output size and final screen the same in every round (no baseline to compare)"
      : "output sizes and final screens identical on both sides";
    say(`checks: ${checks.length === 0 ? `${checked} → OK` : "FAILED"}`);
    for (const check of checks) say(`  ${check}`);

    // Snapshot latency after output settled.
    const snapshot: Record<string, { specter: Stats; specter_cells: Stats; node: Stats | null }> = {};
    for (const [cols, rows] of SNAPSHOT_SIZES) {
      const key = `${cols}x${rows}`;
      const mine = await specterSnapshots(small, cols, rows, flags.snapshots);
      let theirs: SnapshotReply | null = null;
      if (node !== null) {
        theirs = await node.request<SnapshotReply>({
          op: "snapshot",
          file: small.path,
          cols,
          rows,
          scrollback: SCROLLBACK,
          count: flags.snapshots,
          idleMs: IDLE_MS,
          cwd: ROOT,
          env: defaultEnv(),
        });
        if (!sameLines(theirs.lines, mine.lines)) checks.push(`snapshot ${key}: the two screens differ`);
      }
      snapshot[key] = {
        specter: roundStats(stats(mine.plain), 4),
        specter_cells: roundStats(stats(mine.cells), 4),
        node: theirs === null ? null : roundStats(stats(theirs.samples_ms), 4),
      };
    }

    const summarize = (runs: readonly Run[]) => ({
      mbps: roundStats(stats(runs.map((run) => mbps(input, run))), 1),
      wall_ms: roundStats(stats(runs.map((run) => run.ms)), 0),
      cpu_ms_median: round(median(runs.map((run) => run.cpuMs)), 0),
    });
    const specter = summarize(specterRuns);
    const baseline = node === null ? null : summarize(nodeRuns);
    const ratio = baseline === null ? null : specter.mbps.median / baseline.mbps.median;

    say();
    const row = (name: string, s: ReturnType<typeof summarize>) => [
      name,
      s.mbps.median.toFixed(1),
      `${s.mbps.min.toFixed(1)}–${s.mbps.max.toFixed(1)}`,
      s.wall_ms.median.toFixed(0),
      s.cpu_ms_median.toFixed(0),
    ];
    say(table([
      ["throughput (cat → model)", "MB/s median", "min–max", "wall ms median", "process CPU ms median"],
      row("specter (screen: true)", specter),
      ...(baseline === null ? [] : [row("node-pty + xterm headless", baseline)]),
    ]));
    say();
    const ms = (s: Stats | null) => s === null ? "—" : `${s.median.toFixed(3)} / ${s.p90.toFixed(3)}`;
    say(table([
      ["snapshot after idle", "specter ms median / p90", "specter cells: true", "node (sync read)"],
      ...Object.entries(snapshot).map(([key, s]) => [key, ms(s.specter), ms(s.specter_cells), ms(s.node)]),
    ]));
    say();
    say(
      ratio === null
        ? `ratio: not measured (no baseline); goal specter / node ≥ ${ACCEPT_RATIO.toFixed(1)}`
        : `ratio specter / node = ${ratio.toFixed(2)} (goal ≥ ${ACCEPT_RATIO.toFixed(1)}); paired per round ${
          paired.map((x) => x.toFixed(2)).join(" ")
        }`,
    );

    const failures = [...checks];
    if (ratio === null) failures.push(`baseline unavailable: ${baselineError}`);
    else if (!(ratio >= ACCEPT_RATIO)) {
      failures.push(`ratio ${ratio.toFixed(2)} < ${ACCEPT_RATIO.toFixed(1)}`);
    }
    return finish({
      benchmark: "terminal",
      date: new Date().toISOString(),
      bytes: input.bytes,
      lines: input.lines,
      rounds: flags.rounds,
      snapshots: flags.snapshots,
      size: `${COLS}x${ROWS}`,
      unit: "MB/s (10^6 bytes of input per second, from spawn until the model parsed everything)",
      checks: {
        ok: checks.length === 0,
        expected_output_bytes: expectedBytes,
        expected_units: expectedUnits,
      },
      specter: specter,
      baseline: baseline === null ? null : {
        name: baselineName,
        ...baseline,
        watermark_pauses_total: nodeRuns.reduce((sum, run) => sum + (run.pauses ?? 0), 0),
      },
      baseline_error: baselineError,
      ratio: ratio === null ? null : round(ratio, 3),
      ratio_per_round: paired.map((x) => round(x, 3)),
      ratio_per_round_median: paired.length === 0 ? null : round(median(paired), 3),
      snapshot_ms: snapshot,
      acceptance: { ratio_min: ACCEPT_RATIO },
    }, failures);
  } finally {
    await node?.close();
    // The inputs are regenerated every run; the installed baseline stays for the next one.
    await Deno.remove(OUT_DIR, { recursive: true });
  }
}

if (import.meta.main) await runBenchmark("terminal", main);
