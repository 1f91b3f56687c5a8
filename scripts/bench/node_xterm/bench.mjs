// Baseline of scripts/bench/terminal.ts: node-pty + @xterm/headless under Node, measured in the same run.
//
// terminal.ts copies this file, package.pinned.json (as package.json) and package-lock.json into
// bench-out/node_xterm, installs them there with `npm ci` (so no node_modules is ever committed), and
// runs `node bench.mjs` as a long-lived server: one JSON request per stdin line, one JSON reply per
// stdout line. Keeping one process for the whole run lets its JIT warm up just as the in-process
// Specter side does. (The manifest is not named package.json here: Deno would then treat this folder
// as a project of its own. To change a version, edit package.pinned.json, then in a scratch copy named
// package.json run `npm install --package-lock-only` and copy package-lock.json back.)
//
// On start it prints {"ready": true, ...versions} or {"ready": false, "error": "..."} (for instance when
// node-pty's native module did not build). Requests:
//
//   {"op":"throughput","file":F,"cols":80,"rows":24,"scrollback":0,"high":H,"low":L,"cwd":D,"env":{...}}
//     spawns `cat F` through node-pty, writes every chunk into a headless Terminal (same options as
//     Specter's TerminalModel), pauses the pty above H unparsed UTF-16 units and resumes at L (the
//     flow control xterm.js documents, with Specter's watermarks), and stops the clock when the write
//     callback of everything written has run, after the exit. Reply: ms, units, chunks, exit code,
//     process CPU ms, and the final screen's lines (the Deno side compares them with Specter's).
//     On Linux node-pty loses the last few KB of a program that exits while output is still buffered
//     in the terminal (microsoft/node-pty#72, #726: 3-10 KB of 20 MB were lost in each try here). With
//     "expectedUnits", this side therefore holds the terminal's slave side open itself until that many
//     UTF-16 units have arrived, so that both sides parse the same output (without it, the tail may
//     be lost, as in plain node-pty use).
//
//   {"op":"snapshot","file":F,"cols":C,"rows":R,"count":N,"idleMs":200,"cwd":D,"env":{...}}
//     spawns `sh -c 'cat F; exec sleep 600'`, waits until output has been idle for idleMs and is
//     parsed, then times N snapshots that read what Specter's plain snapshot reads (every screen line
//     as a right-trimmed string, the cursor, the buffer type). Reply: samples_ms, units, lines.
//
// Manual use: echo '{"op":"throughput","file":"/etc/services"}' | node bench.mjs
import { createRequire } from "node:module";
import { closeSync, constants, openSync } from "node:fs";
import { createInterface } from "node:readline";
import { cpuUsage } from "node:process";

const require = createRequire(import.meta.url);

function reply(value) {
  process.stdout.write(JSON.stringify(value) + "\n");
}

let pty;
let Terminal;
let Unicode11Addon;
try {
  pty = require("node-pty");
  Terminal = require("@xterm/headless").Terminal;
  Unicode11Addon = require("@xterm/addon-unicode11").Unicode11Addon;
} catch (error) {
  reply({
    ready: false,
    error: error instanceof Error ? error.message : String(error),
  });
  process.exit(0);
}

/** A headless terminal configured as src/terminal/model.ts configures Specter's. */
function newTerminal(req) {
  const term = new Terminal({
    cols: req.cols ?? 80,
    rows: req.rows ?? 24,
    scrollback: req.scrollback ?? 0,
    allowProposedApi: true,
    convertEol: false,
  });
  term.loadAddon(new Unicode11Addon());
  term.unicode.activeVersion = "11";
  let title = "";
  term.onTitleChange((t) => title = t);
  return { term, title: () => title };
}

/** What Specter's plain snapshot computes (TerminalModel.snapshot without cells). */
function snapshot(term, title) {
  const buffer = term.buffer.active;
  const top = buffer.baseY;
  const lines = [];
  for (let y = 0; y < term.rows; y++) {
    const line = buffer.getLine(top + y);
    lines.push(
      line === undefined ? "" : line.translateToString(true).replace(/ +$/, ""),
    );
  }
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  return {
    cols: term.cols,
    rows: term.rows,
    cursor: { x: Math.min(buffer.cursorX, term.cols - 1), y: buffer.cursorY },
    alt_screen: buffer.type === "alternate",
    title,
    lines,
  };
}

function spawnOptions(req) {
  return {
    name: "xterm-256color",
    cols: req.cols ?? 80,
    rows: req.rows ?? 24,
    cwd: req.cwd ?? process.cwd(),
    env: req.env ?? process.env,
  };
}

function throughput(req) {
  const high = req.high ?? 4 * 1024 * 1024;
  const low = req.low ?? 1024 * 1024;
  return new Promise((resolve) => {
    const { term, title } = newTerminal(req);
    let pending = 0;
    let paused = false;
    let units = 0;
    let chunks = 0;
    let pauses = 0;
    const cpu0 = cpuUsage();
    const start = performance.now();
    const child = pty.spawn("cat", [req.file], spawnOptions(req));
    // Hold the slave side open (see the header): the master then never reads EIO while output is
    // still buffered, and the hold is released once everything expected has arrived.
    const expected = req.expectedUnits;
    let hold = expected === undefined ? null : openSync(child.ptsName, constants.O_RDWR | constants.O_NOCTTY);
    // If the expected amount never arrives (a mismatch the reply reports), do not hang: release the
    // hold once no chunk arrived for a whole interval. An interval, not a timer re-armed per chunk, so
    // that the watchdog adds no work to the measured path.
    let seen = -1;
    const watchdog = hold === null ? null : setInterval(() => {
      if (chunks === seen) release();
      seen = chunks;
    }, req.stallMs ?? 3000);
    const release = () => {
      if (hold === null) return;
      closeSync(hold);
      hold = null;
      clearInterval(watchdog);
    };
    child.onData((data) => {
      const n = data.length;
      units += n;
      chunks++;
      pending += n;
      if (hold !== null && units >= expected) release();
      term.write(data, () => {
        pending -= n;
        if (paused && pending <= low) {
          paused = false;
          child.resume();
        }
      });
      if (!paused && pending > high) {
        paused = true;
        pauses++;
        child.pause();
      }
    });
    // node-pty emits exit only after its socket closed, i.e. after the last data event.
    child.onExit(({ exitCode }) => {
      // Write callbacks run in order: this one runs once every chunk before it is parsed.
      term.write("", () => {
        const ms = performance.now() - start;
        const cpu = cpuUsage(cpu0);
        const screen = snapshot(term, title());
        term.dispose();
        resolve({
          ok: true,
          held_slave: expected !== undefined,
          ms,
          cpu_ms: (cpu.user + cpu.system) / 1000,
          units,
          chunks,
          pauses,
          exit_code: exitCode,
          lines: screen.lines,
        });
      });
    });
  });
}

function snapshotLatency(req) {
  const idleMs = req.idleMs ?? 200;
  const count = req.count ?? 100;
  return new Promise((resolve) => {
    const { term, title } = newTerminal(req);
    let units = 0;
    let timer = null;
    const child = pty.spawn("sh", [
      "-c",
      'cat "$1"; exec sleep 600',
      "sh",
      req.file,
    ], spawnOptions(req));
    const measure = () => {
      // Output is idle; the empty write's callback runs once everything written so far is parsed.
      term.write("", () => {
        const samples = [];
        let screen = null;
        for (let i = 0; i < count; i++) {
          const t0 = performance.now();
          screen = snapshot(term, title());
          samples.push(performance.now() - t0);
        }
        child.kill("SIGKILL");
        term.dispose();
        resolve({
          ok: true,
          samples_ms: samples,
          units,
          lines: screen?.lines ?? [],
        });
      });
    };
    child.onData((data) => {
      units += data.length;
      term.write(data);
      if (timer !== null) clearTimeout(timer);
      timer = setTimeout(measure, idleMs);
    });
  });
}

const handlers = { throughput, snapshot: snapshotLatency };

reply({
  ready: true,
  node: process.version,
  node_pty: require("node-pty/package.json").version,
  xterm_headless: require("@xterm/headless/package.json").version,
  addon_unicode11: require("@xterm/addon-unicode11/package.json").version,
});

// One request at a time: the next line is read only after the previous reply (no overlap in timing).
const input = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of input) {
  if (line.trim() === "") continue;
  try {
    const req = JSON.parse(line);
    const handler = handlers[req.op];
    if (handler === undefined) {
      throw new Error(`unknown op ${JSON.stringify(req.op)}`);
    }
    reply(await handler(req));
  } catch (error) {
    reply({
      ok: false,
      error: error instanceof Error ? error.message : String(error),
    });
  }
}
