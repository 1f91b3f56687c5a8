/**
 * Sessions against real programs: REPLs, job control, signals, resize, output integrity, cleanup.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  alive,
  jobControlRoundTrip,
  NO_SANDBOX,
  sessionTest,
  spawnSession,
  start,
  withTempDir,
} from "./_helpers.ts";
import { Transcript } from "../src/mod.ts";
import { reactor } from "../src/pty/reactor.ts";
import { libc } from "../src/pty/_libc.ts";

const PY = "python3";

sessionTest("python3 REPL driven line by line", async () => {
  const r = start({ argv: [PY, "-q", "-i"], env: { PYTHON_BASIC_REPL: "1" }, promptRegex: [">>> $"] });
  await r.until((f) => f.type === "prompt", 10_000, "first prompt");
  let mark = r.text.length;
  r.session.write("1 + 41\r");
  await r.output(/\r\n42\r\n>>> $/, 10_000, mark);
  mark = r.text.length;
  r.session.write("def f(x):\r");
  await r.output("... ", 10_000, mark);
  r.session.write("    return x * 3\r");
  r.session.write("\r");
  await r.output(">>> ", 10_000, mark);
  mark = r.text.length;
  r.session.write("print(f('ab'))\r");
  await r.output("ababab", 10_000, mark);
  r.session.write("exit()\r");
  const exit = await r.exit();
  assert.deepEqual(exit.code, 0);
  assert(exit.last_lines.some((l) => l.includes("ababab")), JSON.stringify(exit.last_lines));
});

sessionTest("bash job control: ctrl-z stops a job, fg resumes it, ctrl-c ends it", async () => {
  const r = start({
    argv: ["bash", "--norc", "--noprofile", "-i"],
    env: { PS1: "PROMPT$ " },
    promptRegex: ["PROMPT\\$ $"],
  });
  await jobControlRoundTrip(r, /PROMPT\$ $/);
  r.session.write("exit 7\r");
  assert.deepEqual((await r.exit()).code, 7);
});

sessionTest("stopped and continued frames when the direct child gets TSTP and CONT", async () => {
  const r = start({ argv: ["sleep", "100"] });
  await r.until((f) => f.type === "start");
  r.session.signal("TSTP");
  const stopped = await r.until((f) => f.type === "stopped", 5_000, "stopped");
  // sleep keeps TSTP's default action, which the kernel drops for an orphaned group: sent as STOP.
  assert.deepEqual(stopped.type === "stopped" && stopped.signal, "STOP");
  const sent = r.frames.find((f) => f.type === "signal");
  assert.deepEqual(sent?.type === "signal" && [sent.signal, sent.delivered_as], ["TSTP", "STOP"]);
  r.session.signal("CONT");
  await r.until((f) => f.type === "continued", 5_000, "continued");
  r.session.signal("INT");
  const exit = await r.exit();
  assert.deepEqual(exit.signal, "INT");
  assert.deepEqual(exit.code, null);
  const types = r.frames.map((f) => f.type);
  assert(types.indexOf("signal") < types.indexOf("stopped"), types.join(","));
});

sessionTest("TSTP reaches a child that catches it, as TSTP", async () => {
  const script = "import signal,sys,time\n" +
    "signal.signal(signal.SIGTSTP, lambda *_: (print('caught TSTP', flush=True), sys.exit(3)))\n" +
    "print('ready', flush=True)\ntime.sleep(30)\n";
  const r = start({ argv: [PY, "-c", script] });
  await r.output("ready");
  await new Promise((resolve) => setTimeout(resolve, 50)); // The handler is installed before "ready".
  r.session.signal("TSTP");
  await r.output("caught TSTP");
  assert.deepEqual((await r.exit()).code, 3);
  const sent = r.frames.find((f) => f.type === "signal");
  assert.deepEqual(sent?.type === "signal" && [sent.signal, sent.delivered_as], ["TSTP", undefined]);
});

sessionTest("resize is seen by the child (stty size and SIGWINCH)", async () => {
  const r = start({
    argv: ["bash", "-c", "trap 'echo WINCH' WINCH; stty size; read -r _; stty size"],
    cols: 80,
    rows: 24,
  });
  await r.output("24 80\r\n");
  r.session.resize(100, 30);
  await r.until((f) => f.type === "resize_ack", 5_000, "resize_ack");
  r.session.write("\r");
  await r.output("30 100\r\n");
  assert.deepEqual((await r.exit()).code, 0);
  assert(r.text.includes("WINCH"), "bash saw SIGWINCH");
});

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

for (const kind of ["text", "random bytes"] as const) {
  sessionTest(`5 MB of ${kind} then immediate exit: every byte delivered`, async () => {
    await withTempDir(async (dir) => {
      const size = 5_000_000;
      const content = new Uint8Array(size);
      if (kind === "text") {
        for (let i = 0; i < size; i++) content[i] = i % 100 === 99 ? 10 : 32 + ((i * 7) % 95);
      } else {
        for (let offset = 0; offset < size; offset += 65536) {
          crypto.getRandomValues(content.subarray(offset, Math.min(size, offset + 65536)));
        }
      }
      await Deno.writeFile(`${dir}/data`, content);
      // -opost: the terminal passes bytes through unchanged (no \n → \r\n), so hashes can be compared.
      const r = start({ argv: ["sh", "-c", 'stty -opost -echo; exec cat "$1"', "sh", `${dir}/data`] });
      const exit = await r.exit(30_000);
      assert.deepEqual(exit.code, 0);
      assert.deepEqual(r.bytes.length, size);
      assert.deepEqual(sha256(r.bytes), sha256(content));
      if (kind === "text") assert(r.frames.every((f) => f.type !== "stdout" || !f.binary), "text stays text");
    });
  });
}

sessionTest("a UTF-8 character split across reads is never split across frames", async () => {
  const script =
    "import os,time\nos.write(1,b'a\\xf0\\x9f')\ntime.sleep(0.3)\nos.write(1,b'\\x98\\x80b\\xc3')\n" +
    "time.sleep(0.3)\nos.write(1,b'\\xa9!')\n";
  const r = start({ argv: [PY, "-c", script] });
  await r.exit();
  const stdout = r.frames.filter((f) => f.type === "stdout");
  assert(stdout.length >= 3, `expected separate reads, got ${stdout.length} frame(s)`);
  assert(stdout.every((f) => f.type === "stdout" && !f.binary), "no frame fell back to base64");
  assert.deepEqual(stdout.map((f) => f.type === "stdout" ? f.data : "").join(""), "a😀bé!");
  assert(stdout.some((f) => f.type === "stdout" && f.data.includes("😀")), "the emoji arrives whole");
});

sessionTest("invalid UTF-8 is delivered as base64 with binary: true", async () => {
  const r = start({ argv: ["printf", "ok\\377\\376"] });
  await r.exit();
  const frames = r.frames.filter((f) => f.type === "stdout");
  assert(frames.some((f) => f.type === "stdout" && f.binary === true), JSON.stringify(frames));
  assert.deepEqual([...r.bytes], [0x6f, 0x6b, 0xff, 0xfe]);
});

sessionTest("a child ignoring SIGTERM and SIGHUP is ended by SIGKILL after the grace period", async () => {
  const r = start({ argv: ["bash", "-c", "trap '' TERM HUP; echo ready; while :; do read -t 0.05 _; done"] });
  await r.output("ready");
  const started = performance.now();
  void r.session.terminate(400);
  const exit = await r.exit();
  assert.deepEqual(exit.signal, "KILL");
  assert(performance.now() - started >= 350, "SIGKILL came only after the grace period");
});

sessionTest("a background grandchild does not outlive the session", async () => {
  const r = start({ argv: ["bash", "-c", "sleep 1000 & echo bg=$!; exit 0"] });
  const exit = await r.exit();
  assert.deepEqual(exit.code, 0);
  const pid = Number(/bg=(\d+)/.exec(r.text)?.[1]);
  assert(pid > 0, r.text);
  assert(!alive(pid), `background sleep ${pid} survived the session`);
});

sessionTest("a stopped job does not outlive the session", async () => {
  const r = start({ argv: ["bash", "-c", "sleep 1000 & echo bg=$!; kill -STOP $!; exit 0"] });
  await r.exit();
  const pid = Number(/bg=(\d+)/.exec(r.text)?.[1]);
  assert(pid > 0 && !alive(pid), `stopped sleep ${pid} survived`);
});

sessionTest("timeout terminates the program and sets timed_out", async () => {
  const r = start({ argv: ["sleep", "30"], timeoutMs: 300 });
  const exit = await r.exit();
  assert.deepEqual(exit.timed_out, true);
  assert(exit.duration_ms >= 290 && exit.duration_ms < 5000, String(exit.duration_ms));
});

sessionTest("200 concurrent sessions each echo their own id", async () => {
  const readers = Array.from(
    { length: 200 },
    (_, i) => start({ argv: ["sh", "-c", 'read -r line; echo "got:$line"'], id: `session-${i}` }),
  );
  // Every session is alive at once before any gets its input.
  await Promise.all(readers.map((r) => r.until((f) => f.type === "start")));
  readers.forEach((r, i) => r.session.write(`id-${i}\r`));
  const exits = await Promise.all(readers.map((r) => r.exit(30_000)));
  readers.forEach((r, i) => {
    assert.deepEqual(exits[i]!.code, 0);
    assert.deepEqual(exits[i]!.session.id, `session-${i}`);
    assert.match(r.text, new RegExp(`got:id-${i}\\r\\n`));
    assert.deepEqual(r.text.match(/got:id-\d+/g), [`got:id-${i}`]);
  });
}, 60_000);

sessionTest("idle fires once after quiet output, prompt matches the settled current line", async () => {
  const r = new Transcript(spawnSession({
    sandbox: NO_SANDBOX,
    argv: ["sh", "-c", "printf 'loading\\r\\nready> '; read -r _"],
    idleMs: 150,
    promptRegex: ["^nomatch$", "ready> $"],
  }));
  const prompt = await r.until((f) => f.type === "prompt");
  assert.deepEqual(prompt.type === "prompt" && [prompt.regex, prompt.line], ["ready> $", "ready> "]);
  const idle = await r.until((f) => f.type === "idle");
  assert(idle.type === "idle" && idle.dur_ms >= 150);
  // Quiet for two more idle periods: an idle that fired again in the same quiet period would show here.
  await new Promise((resolve) => setTimeout(resolve, 400));
  r.session.write("\r");
  await r.exit();
  // Once per quiet period: never two idle frames without output between them. (The echo of "\r" starts
  // a new period: on a loaded machine its own idle may come before the exit, and that one is right.)
  const kinds = r.frames.filter((f) => f.type === "idle" || f.type === "stdout").map((f) => f.type);
  assert.ok(kinds.includes("idle"));
  assert.ok(!kinds.some((kind, i) => kind === "idle" && kinds[i + 1] === "idle"), kinds.join(" "));
});

sessionTest("exit carries last_lines (ANSI stripped) and session metadata", async () => {
  const r = start({
    argv: ["sh", "-c", "for i in 1 2 3 4 5; do printf '\\033[1mline %s\\033[0m\\n' $i; done"],
    lastLines: 3,
    title: "build",
    description: "run tests",
    parentAgent: "claude",
  });
  const exit = await r.exit();
  assert.deepEqual(exit.last_lines, ["line 3", "line 4", "line 5"]);
  assert.deepEqual(exit.session.title, "build");
  assert.deepEqual(exit.session.description, "run tests");
  assert.deepEqual(exit.session.parent_agent, "claude");
});

sessionTest("a program without output exits with empty last_lines", async () => {
  const r = start({ argv: ["true"] });
  const exit = await r.exit();
  assert.deepEqual(exit.last_lines, []);
  assert.deepEqual(exit.code, 0);
});

sessionTest("frames have strictly increasing seq from 0 and increasing ts", async () => {
  const r = start({ argv: ["sh", "-c", "echo a; sleep 0.05; echo b"] });
  await r.exit();
  r.frames.forEach((f, i) => assert.deepEqual(f.seq, i));
  for (let i = 1; i < r.frames.length; i++) assert(r.frames[i]!.ts >= r.frames[i - 1]!.ts);
});

sessionTest("a slow consumer pauses reading instead of growing memory, then overflow kills", async () => {
  const session = spawnSession({
    sandbox: NO_SANDBOX,
    argv: ["sh", "-c", "yes xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"],
    idleMs: 0,
    bufferBytes: 64 * 1024,
    overflowTimeoutMs: 500,
    heartbeatMs: 20, // Frames keep arriving while discarding: they must not pause reading again.
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const first = await session.nextFrames(); // One batch only: the queue was capped near the buffer.
  const queued = first.reduce((n, f) => n + ("data" in f ? f.data.length : 0), 0);
  assert(queued < 64 * 1024 + 64 * 1024 + 4096, `queued ${queued} bytes despite a 64 KiB buffer`);
  const exit = await session.exited;
  const rest: string[] = [];
  for (;;) {
    const batch = await session.nextFrames();
    if (batch.length === 0) break;
    rest.push(...batch.map((f) => f.type));
  }
  assert.deepEqual(exit.signal, "KILL");
  assert.deepEqual(rest.filter((type) => type === "overflow").length, 1, rest.join(","));
});

sessionTest("max output budget: overflow frame, truncated output, session killed", async () => {
  const r = start({ argv: ["sh", "-c", "yes abcdefghij"], maxOutputBytes: 10_000 });
  const overflow = await r.until((f) => f.type === "overflow");
  assert.deepEqual(overflow.type === "overflow" && overflow.reason, "max_output");
  const kill = await r.until((f) => f.type === "capsule_kill");
  assert.deepEqual(kill.type === "capsule_kill" && [kill.reason, kill.limit], ["output", 10_000]);
  const exit = await r.exit();
  assert.deepEqual(r.bytes.length, 10_000);
  assert.deepEqual(r.session.truncated, true);
  assert.deepEqual(exit.signal, "KILL");
});

sessionTest("keys honour application cursor mode switched on by the program", async () => {
  const script = "import os,sys,tty\ntty.setraw(0)\nos.write(1,b'\\x1b[?1h')\n" +
    "os.write(1,b'[' + os.read(0,3).hex().encode() + b']')\nos.write(1,b'\\x1b[?1l')\n" +
    "os.write(1,b'[' + os.read(0,3).hex().encode() + b']')\n";
  const r = start({ argv: [PY, "-c", script] });
  await r.until((f) => f.type === "stdout" && f.data.includes("\x1b[?1h"));
  r.session.press("up");
  await r.output("[1b4f41]");
  await r.output("\x1b[?1l");
  r.session.press("up");
  await r.output("[1b5b41]");
  await r.exit();
});

sessionTest("input is echoed as stdin frames; key frames name the key", async () => {
  const r = start({ argv: ["cat"] });
  r.session.write("hi\r");
  await r.output("hi\r\n");
  r.session.press("ctrl-d");
  await r.exit();
  const stdin = r.frames.filter((f) => f.type === "stdin");
  assert.deepEqual(stdin.map((f) => f.type === "stdin" && [f.data, f.key]), [["hi\r", undefined], [
    "\x04",
    "ctrl-d",
  ]]);
});

sessionTest("writes after exit fail with E_SESSION_CLOSED", async () => {
  const r = start({ argv: ["true"] });
  await r.exit();
  try {
    r.session.write("x");
    throw new Error("write succeeded");
  } catch (error: unknown) {
    assert.deepEqual((error as { code?: string }).code, "E_SESSION_CLOSED");
  }
});

sessionTest("the reactor unregisters a session once it has ended", async () => {
  const before = reactor().size;
  // Long enough to still run when the assertion comes, however loaded the machine (0.2 s once was not).
  const r = start({ argv: ["sleep", "30"] });
  await r.until((f) => f.type === "start");
  assert.deepEqual(reactor().size, before + 1);
  await r.session.terminate(0);
  await r.exit();
  assert.deepEqual(reactor().size, before);
});

sessionTest("Transcript waits time out with E_IO and the recent output", async () => {
  const r = start({ argv: ["sh", "-c", "echo partial; sleep 5"] });
  await r.output("partial");
  await assert.rejects(r.output("never printed", 200), (e: unknown) => {
    const error = e as { code: string; details: { recent_output: string } };
    return error.code === "E_IO" && error.details.recent_output.includes("partial");
  });
  await r.session.terminate(0);
  await r.exit();
});

sessionTest(
  "output held in the terminal while the consumer is behind survives the program's exit",
  async () => {
    await withTempDir(async (dir) => {
      // 2 000 bytes first: the session reads them and pauses (over its 1 024-byte buffer). Half a second
      // later 3 000 more, which stay in the terminal (its buffers hold ~20 KiB here), and the program exits
      // while reading is paused: output still owed to the consumer. (Writing it all at once made the
      // premise a race: one read turn takes up to 64 KiB, or the rest did not fit and cat never ended.)
      const first = 2_000;
      const size = 5_000;
      await Deno.writeFile(`${dir}/data`, new Uint8Array(size).fill(0x61));
      const session = spawnSession({
        sandbox: NO_SANDBOX,
        argv: [
          "sh",
          "-c",
          'stty -opost; head -c "$2" "$1"; sleep 0.5; exec tail -c +"$(($2 + 1))" "$1"',
          "sh",
          `${dir}/data`,
          String(first),
        ],
        idleMs: 0,
        bufferBytes: 1024,
        overflowTimeoutMs: 20_000,
      });
      // The program must finish while reading is paused (polled: a loaded machine may take a while).
      const deadline = Date.now() + 15_000;
      while (alive(session.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.ok(
        !alive(session.pid),
        `the program finished while reading was paused (${session.outputBytes} bytes read)`,
      );
      // The premise: part of the output is still in the terminal, owed to the consumer.
      assert.ok(
        session.outputBytes < size,
        `${session.outputBytes} of ${size} bytes were read before the pause`,
      );
      // Then fall behind for longer than the 2 s drain deadline that applies after the child is reaped.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      let received = 0;
      for await (const frame of session.frames()) if (frame.type === "stdout") received += frame.data.length;
      assert.equal(received, size);
    });
  },
  60_000,
);

sessionTest("a job-control background job (its own process group) does not outlive the session", async () => {
  const r = start({ argv: ["bash", "-c", "set -m; sleep 1000 & echo bg=$!; exit 0"] });
  await r.exit();
  const pid = Number(/bg=(\d+)/.exec(r.text)?.[1]);
  assert.ok(pid > 0, r.text);
  assert.ok(!alive(pid), `background job ${pid} in its own group survived`);
});

sessionTest("a timeout after the program exited in time does not count as timed out", async () => {
  // The setsid'd sleep escapes the session and holds the terminal: exit waits for the drain deadline,
  // during which the timeout fires.
  const r = start({ argv: ["sh", "-c", "setsid sleep 3.25 & sleep 0.2; echo hi; exit 0"], timeoutMs: 1000 });
  const exit = await r.exit();
  assert.deepEqual([exit.code, exit.timed_out], [0, false]);
});

sessionTest("signals are named in exit frames (SEGV, ABRT)", async () => {
  for (const signal of ["SEGV", "ABRT"] as const) {
    const r = start({ argv: ["sh", "-c", `kill -${signal} $$`] });
    const exit = await r.exit();
    assert.deepEqual([exit.code, exit.signal], [null, signal]);
  }
});

sessionTest("a program that closed its terminal can still be signalled and resized", async () => {
  const r = start({ argv: ["sh", "-c", "exec >/dev/null 2>&1 </dev/null; exec sleep 30"] });
  await new Promise((resolve) => setTimeout(resolve, 300));
  r.session.resize(90, 20);
  r.session.signal("INT");
  const exit = await r.exit();
  assert.deepEqual(exit.signal, "INT");
  assert.ok(r.frames.some((f) => f.type === "resize_ack"));
});

sessionTest("invalid resize values are rejected with E_USAGE", async () => {
  const r = start({ argv: ["sleep", "5"] });
  for (const [cols, rows] of [[0, 10], [80.5, 24], [80, 70000]]) {
    assert.throws(() => r.session.resize(cols!, rows!), { code: "E_USAGE" });
  }
  await r.session.terminate(0);
  await r.exit();
});

sessionTest("only fds 0-2 and requested ones reach the child", async () => {
  const { sym } = libc();
  const passed = new Int32Array(2);
  const stray = new Int32Array(2);
  // libc pipe() fds are not close-on-exec: exactly what a careless parent would leave around.
  assert.equal(sym.pipe(passed), 0);
  assert.equal(sym.pipe(stray), 0);
  try {
    const message = new TextEncoder().encode("via fd 3\n");
    sym.write(passed[1]!, message, BigInt(message.length));
    sym.close(passed[1]!);
    const r = start({
      argv: ["sh", "-c", "read -r line <&3; echo \"got: $line\"; ls /proc/$$/fd | tr '\\n' ' '"],
      inheritFds: [{ fd: passed[0]!, target: 3 }],
    });
    await r.exit();
    assert.match(r.text, /got: via fd 3/);
    const fds = /got: via fd 3\r\n([\d ]+)/.exec(r.text)?.[1]?.trim().split(/\s+/).map(Number) ?? [];
    assert.ok(!fds.includes(stray[0]!) && !fds.includes(stray[1]!), `stray fds leaked: ${fds.join(",")}`);
  } finally {
    sym.close(passed[0]!);
    sym.close(stray[0]!);
    sym.close(stray[1]!);
  }
});
