/**
 * Driver input is bounded and typed, tried against the real CLI: huge lines, floods of input the program
 * never reads, oversized resizes, invalid UTF-8 and base64, input after the terminal closed, and a frame
 * reader that goes away. Specter's memory is read from /proc/<pid>/status (VmRSS).
 *
 * @module
 */
import assert from "node:assert/strict";
import { DENO, ROOT, sessionTest, withTempDir } from "./_helpers.ts";

const UNSAFE = ["--unsafe-no-sandbox", "--ack-no-network-enforcement"];
const encoder = new TextEncoder();

/** A `specter run` with raw byte access to its stdin and a running parse of its frames. */
class Specter {
  readonly child: Deno.ChildProcess;
  readonly frames: Record<string, unknown>[] = [];
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #done: Promise<void>;
  #waiters: {
    test: (f: Record<string, unknown>) => boolean;
    resolve: (f: Record<string, unknown>) => void;
  }[] = [];
  peakRss = 0;
  #sampler: ReturnType<typeof setInterval>;

  constructor(args: string[]) {
    this.child = new Deno.Command(DENO, {
      args: ["run", "--quiet", "-A", `${ROOT}/main.ts`, "run", ...UNSAFE, ...args],
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
      cwd: ROOT,
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    this.#done = this.#read();
    this.#sampler = setInterval(() => {
      this.peakRss = Math.max(this.peakRss, this.rss());
    }, 20);
  }

  /** Specter's resident memory now, in bytes (0 once it is gone). */
  rss(): number {
    try {
      const status = Deno.readTextFileSync(`/proc/${this.child.pid}/status`);
      return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? 0) * 1024;
    } catch {
      return 0; // Exited.
    }
  }

  async #read(): Promise<void> {
    const decoder = new TextDecoder();
    let pending = "";
    for await (const chunk of this.child.stdout) {
      pending += decoder.decode(chunk, { stream: true });
      let newline: number;
      while ((newline = pending.indexOf("\n")) >= 0) {
        const frame = JSON.parse(pending.slice(0, newline)) as Record<string, unknown>;
        pending = pending.slice(newline + 1);
        this.frames.push(frame);
        this.#waiters = this.#waiters.filter((w) => !(w.test(frame) && (w.resolve(frame), true)));
      }
    }
  }

  /** Resolves with the first frame (already seen or to come) that passes `test`. */
  waitFor(test: (f: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    const seen = this.frames.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.#waiters.push({ test, resolve }));
  }

  /** Writes raw bytes to Specter's stdin (waits while the pipe is full). */
  write(bytes: Uint8Array | string): Promise<void> {
    return this.#writer.write(typeof bytes === "string" ? encoder.encode(bytes) : bytes);
  }

  /** Sends a ping with `id` and waits for its pong. */
  async roundTrip(id: string): Promise<void> {
    await this.write(`${JSON.stringify({ v: 1, type: "ping", id })}\n`);
    await this.waitFor((f) => f.type === "pong" && f.id === id);
  }

  errors(code: string): Record<string, unknown>[] {
    return this.frames.filter((f) => f.type === "error" && f.code === code);
  }

  /** Stops the program (SIGTERM to Specter) and waits for Specter to exit. */
  async stop(): Promise<number> {
    this.child.kill("SIGTERM");
    return await this.finish();
  }

  async finish(): Promise<number> {
    const status = await this.child.status;
    await this.#done;
    clearInterval(this.#sampler);
    try {
      this.#writer.releaseLock();
      await this.child.stdin.close();
    } catch {
      // Already closed with the process.
    }
    return status.code;
  }
}

/** Error frames quote at most 80 characters of the input. */
function assertShortEcho(frames: readonly Record<string, unknown>[]): void {
  for (const frame of frames.filter((f) => f.type === "error")) {
    const text = JSON.stringify(frame);
    assert.ok(!/(.)\1{80}/.test(text), `an error frame echoes the input: ${text.slice(0, 300)}`);
    assert.ok(text.length < 1000, `an error frame of ${text.length} characters`);
  }
}

const MiB = 1 << 20;

sessionTest(
  "a 100 MB line without newline: one typed error, bounded memory, and Specter stays responsive",
  async () => {
    const specter = new Specter(["--", "sleep", "60"]);
    await specter.waitFor((f) => f.type === "start");
    await specter.roundTrip("before");
    const baseline = specter.rss();
    const chunk = new Uint8Array(MiB).fill(0x61); // "aaaa…"
    await specter.write('{"v":1,"type":"input","data":"');
    for (let i = 0; i < 100; i++) await specter.write(chunk);
    const error = await specter.waitFor((f) => f.type === "error");
    assert.equal(error.code, "E_PROTOCOL_LINE_TOO_LONG");
    await specter.write('"}\n'); // The end of the over-long line: dropped with it.
    await specter.roundTrip("after");
    assert.equal(specter.errors("E_PROTOCOL_LINE_TOO_LONG").length, 1);
    assert.ok(!specter.frames.some((f) => f.type === "stdin"), "nothing of the line was typed");
    assertShortEcho(specter.frames);
    const grew = specter.peakRss - baseline;
    assert.ok(grew < 64 * MiB, `Specter grew by ${Math.round(grew / MiB)} MiB for a 100 MB line`);
    await specter.stop();
  },
  120_000,
);

sessionTest("many huge lines: one error each, the lines between them still work", async () => {
  const specter = new Specter(["--", "sleep", "60"]);
  await specter.waitFor((f) => f.type === "start");
  const huge = `{"v":1,"type":"ping","id":"${"z".repeat(2 * MiB)}"}\n`;
  for (let i = 0; i < 20; i++) {
    await specter.write(huge);
    await specter.write(`{"v":1,"type":"ping","id":"p${i}"}\n`);
  }
  await specter.waitFor((f) => f.type === "pong" && f.id === "p19");
  assert.equal(specter.errors("E_PROTOCOL_LINE_TOO_LONG").length, 20);
  assert.equal(specter.frames.filter((f) => f.type === "pong").length, 20, "every short line answered");
  assertShortEcho(specter.frames);
  await specter.stop();
}, 120_000);

sessionTest(
  "input far faster than the program reads it: stdin is not read past the high-water mark",
  async () => {
    // In raw mode the terminal keeps what it was sent (canonical mode drops what does not fit a line),
    // and `sleep` never reads it: everything typed stays with Specter or in the pipe.
    const specter = new Specter(["--", "sh", "-c", "stty raw -echo; echo raw; exec sleep 60"]);
    await specter.waitFor((f) => f.type === "stdout" && String(f.data).includes("raw"));
    const baseline = specter.rss();
    const message = `${JSON.stringify({ v: 1, type: "input", data: "q".repeat(64 * 1024) })}\n`;
    let written = 0;
    let stop = false;
    const flood = (async () => {
      while (!stop && written < 512 * MiB) {
        await specter.write(message);
        written += message.length;
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 4000));
    const accepted = written;
    await new Promise((resolve) => setTimeout(resolve, 2000));
    // Back-pressure: the writer is blocked, nothing more was taken in the last two seconds.
    assert.ok(written - accepted <= message.length, `still accepting: ${written - accepted} more bytes`);
    assert.ok(
      accepted < 16 * MiB,
      `${Math.round(accepted / MiB)} MiB accepted for a program that reads nothing`,
    );
    const grew = specter.peakRss - baseline;
    assert.ok(grew < 64 * MiB, `Specter grew by ${Math.round(grew / MiB)} MiB`);
    stop = true;
    const code = await specter.stop(); // Signals still work while stdin is not read.
    assert.equal(specter.frames.at(-1)?.type, "exit");
    assert.equal(code, 128 + 1);
    await flood.catch(() => {/* the pipe closed with Specter */});
  },
  60_000,
);

sessionTest(
  "resize beyond the cap is E_RESIZE_RANGE; a snapshot of the largest screen stays bounded",
  async () => {
    // Fill the screen after the resize, one colour change per cell: the worst case for a cells snapshot.
    const fill = "import sys,time\nsys.stdin.readline()\n" +
      "sys.stdout.write(''.join('\\x1b[3%dm%s' % (i % 8, chr(65 + i % 26)) for i in range(1000 * 500)))\n" +
      "sys.stdout.flush()\nprint('\\x1b[0mFILLED')\ntime.sleep(60)\n";
    const specter = new Specter(["--", "python3", "-c", fill]);
    await specter.waitFor((f) => f.type === "start");
    await specter.write('{"v":1,"type":"resize","cols":100000,"rows":100000}\n');
    await specter.write('{"v":1,"type":"resize","cols":1001,"rows":24}\n');
    await specter.write('{"v":1,"type":"resize","cols":80,"rows":501}\n');
    await specter.roundTrip("resized");
    assert.equal(specter.errors("E_RESIZE_RANGE").length, 3);
    assert.ok(!specter.frames.some((f) => f.type === "resize"), "no oversized resize was applied");
    await specter.write('{"v":1,"type":"resize","cols":1000,"rows":500}\n');
    await specter.waitFor((f) => f.type === "resize_ack");
    const baseline = specter.rss();
    await specter.write('{"v":1,"type":"input","data":"go\\r"}\n');
    await specter.waitFor((f) => f.type === "stdout" && String(f.data).includes("FILLED"));
    const asked = performance.now();
    await specter.write('{"v":1,"type":"snapshot","name":"max","cells":true}\n');
    const snapshot = await specter.waitFor((f) => f.type === "snapshot");
    const took = performance.now() - asked;
    const size = JSON.stringify(snapshot).length;
    const screen = snapshot.screen as { cols: number; rows: number };
    assert.deepEqual([screen.cols, screen.rows], [1000, 500]);
    assert.ok(size < 64 * MiB, `snapshot frame of ${Math.round(size / MiB)} MiB`);
    assert.ok(took < 20_000, `snapshot took ${Math.round(took)} ms`);
    const grew = specter.peakRss - baseline;
    assert.ok(grew < 512 * MiB, `Specter grew by ${Math.round(grew / MiB)} MiB`);
    await specter.stop();
  },
  90_000,
);

sessionTest("invalid UTF-8 and invalid base64 each get their own code; nothing is typed", async () => {
  const specter = new Specter(["--", "sleep", "60"]);
  await specter.waitFor((f) => f.type === "start");
  await specter.write(
    new Uint8Array([
      ...encoder.encode('{"v":1,"type":"input","data":"'),
      0xff,
      0xc0,
      ...encoder.encode('"}\n'),
    ]),
  );
  await specter.write('{"v":1,"type":"input","data":"not base64!","binary":true}\n');
  await specter.write(`{"v":1,"type":"input","data":"${"%".repeat(5000)}","binary":true}\n`);
  await specter.roundTrip("after");
  assert.equal(specter.errors("E_PROTOCOL_UTF8").length, 1);
  assert.equal(specter.errors("E_PROTOCOL_BASE64").length, 2);
  assert.ok(!specter.frames.some((f) => f.type === "stdin"), "nothing was typed");
  assertShortEcho(specter.frames);
  // Valid base64 is still typed.
  await specter.write('{"v":1,"type":"input","data":"aGk=","binary":true}\n');
  await specter.waitFor((f) => f.type === "stdin");
  await specter.stop();
});

sessionTest("input after the program closed its terminal is E_SESSION_CLOSED", async () => {
  // The program closes every descriptor of its terminal and goes on running: the terminal is closed.
  const specter = new Specter(["--", "sh", "-c", "echo closing; exec sleep 5 0<&- 1>&- 2>&-"]);
  await specter.waitFor((f) => f.type === "stdout" && String(f.data).includes("closing"));
  await new Promise((resolve) => setTimeout(resolve, 300));
  await specter.write('{"v":1,"type":"input","data":"late\\r"}\n');
  await specter.write('{"v":1,"type":"key","key":"enter"}\n');
  const closed = await specter.waitFor((f) => f.type === "error");
  assert.equal(closed.code, "E_SESSION_CLOSED");
  await specter.stop();
  assert.equal(specter.errors("E_SESSION_CLOSED").length, 2);
  assert.ok(!specter.frames.some((f) => f.type === "stdin"));
});

sessionTest(
  "a frame reader that goes away: E_STDOUT_CLOSED, exit 141, program stopped, audit written",
  async () => {
    await withTempDir(async (dir) => {
      const marker = `stdout-closed-${crypto.randomUUID().slice(0, 8)}`;
      const script =
        `"${DENO}" run --quiet -A "${ROOT}/main.ts" run ${UNSAFE.join(" ")} --artifacts "${dir}/a" ` +
        `-- sh -c 'while :; do echo ${marker}; done' | head -c 100 >/dev/null; echo "status=\${PIPESTATUS[0]}"`;
      const started = performance.now();
      const { stdout, stderr } = await new Deno.Command("bash", { args: ["-c", script], stdin: "null" })
        .output();
      const out = new TextDecoder().decode(stdout);
      const err = new TextDecoder().decode(stderr);
      assert.ok(performance.now() - started < 30_000, "no hang");
      assert.match(out, /status=141/, err);
      assert.match(err, /E_STDOUT_CLOSED/);
      assert.doesNotMatch(err, /Uncaught|error: |panicked/i, "no untyped crash");
      const records = (await Deno.readTextFile(`${dir}/a/audit.ndjson`)).trim().split("\n").map((l) =>
        JSON.parse(l)
      );
      const kinds = records.map((r) => r.type ?? r.kind ?? r.event);
      assert.ok(JSON.stringify(records).includes("E_STDOUT_CLOSED"), JSON.stringify(kinds));
      assert.ok(kinds.includes("end"), `an end record: ${JSON.stringify(kinds)}`);
      // The program is gone: no process runs the marker loop.
      const left: string[] = [];
      for (const entry of Deno.readDirSync("/proc")) {
        if (!/^\d+$/.test(entry.name)) continue;
        try {
          const cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`);
          if (cmdline.includes(marker) && !cmdline.includes("head -c")) left.push(entry.name);
        } catch {
          // It exited while we looked.
        }
      }
      assert.deepEqual(left, []);
    });
  },
  60_000,
);
