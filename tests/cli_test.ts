/**
 * The `specter` CLI as a real process: frames on stdout, driver input on stdin, recordings, exec.
 */
import assert from "node:assert/strict";
import { Ajv2020 } from "ajv/dist/2020.js";
import { decodeStream } from "../src/frames/encode.ts";
import { alive, CliProcess, ROOT, runCli, sessionTest, start, withTempDir } from "./_helpers.ts";

const UNSAFE = ["--unsafe-no-sandbox", "--ack-no-network-enforcement"] as const;
type Json = Record<string, unknown>;

function framesOf(stdout: Uint8Array): Json[] {
  return decodeStream(stdout, "ndjson") as Json[];
}

/** `asciinema cat` opens /dev/tty, so it runs under a Specter session (a real terminal). */
async function asciinemaCat(cast: string): Promise<{ code: number | null; text: string }> {
  const player = start({ argv: ["asciinema", "cat", cast] });
  const exit = await player.exit(20_000);
  return { code: exit.code, text: player.text };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A `specter run` whose frames are read as they come, so a test can wait for one before it sends the next
 * driver message (instead of sleeping and hoping the CLI has started and the program got there).
 */
class LiveCli {
  readonly frames: Json[] = [];
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #stdout: Promise<void>;
  readonly #stderr: Promise<string>;
  #wake: () => void = () => {};

  constructor(args: string[]) {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "-A", `${ROOT}/main.ts`, ...args],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      cwd: ROOT,
    }).spawn();
    this.#child = child;
    this.#writer = child.stdin.getWriter();
    this.#stderr = new Response(child.stderr).text();
    this.#stdout = (async () => {
      let buffered = "";
      for await (const text of child.stdout.pipeThrough(new TextDecoderStream())) {
        buffered += text;
        let newline: number;
        while ((newline = buffered.indexOf("\n")) >= 0) {
          const line = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          if (line.startsWith("{")) this.frames.push(JSON.parse(line));
        }
        this.#wake();
      }
      this.#wake();
    })();
  }

  async send(...lines: (string | Json)[]): Promise<void> {
    const text = lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l)) + "\n").join("");
    await this.#writer.write(new TextEncoder().encode(text));
  }

  /** Waits for a frame of `type` (seen before or after the call). */
  async until(type: string, ms = 20_000): Promise<Json> {
    const deadline = performance.now() + ms;
    for (;;) {
      const frame = this.frames.find((f) => f.type === type);
      if (frame !== undefined) return frame;
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`No "${type}" frame within ${ms} ms: ${JSON.stringify(this.frames)}`);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        timer = setTimeout(resolve, left);
      });
      clearTimeout(timer);
    }
  }

  async finish(): Promise<{ code: number; stderr: string }> {
    await this.#writer.close();
    const [status, , stderr] = await Promise.all([this.#child.status, this.#stdout, this.#stderr]);
    return { code: status.code, stderr };
  }
}

sessionTest("every frame printed by specter run validates against the published JSON Schema", async () => {
  const schema = JSON.parse(await Deno.readTextFile(`${ROOT}/spec/schema/frame.schema.json`));
  const validate = new Ajv2020({ allErrors: true, strict: false }).compile(schema);
  const all: Json[] = [];

  // Run 1: output (text and binary), resize, prompt, idle, ping/pong, heartbeat, errors, input echo.
  // Every step waits for the frame it needs rather than for a fixed time: under load the CLI may take
  // seconds to start, and the program's quiet period must not race the prompt/idle/heartbeat timers.
  const one = new LiveCli([
    "run",
    ...UNSAFE,
    "--prompt-regex",
    "ready> $",
    "--idle",
    "100ms",
    "--heartbeat",
    "100ms",
    "--title",
    "schema",
    "--",
    "sh",
    "-c",
    'printf "\\377\\n"; read -r x; stty size; echo "got $x"; printf "ready> "; read -r y; echo done',
  ]);
  await one.send(
    "not json",
    { v: 1, type: "ping", id: 1 },
    { v: 1, type: "resize", cols: 100, rows: 30 },
    // One Enter only, from the key message: the read cannot finish before it, so no echo of typed-ahead
    // input can land after the prompt.
    { v: 1, type: "input", data: "hello" },
    { v: 1, type: "key", key: "enter" },
  );
  // The program now waits at "ready> " until told to go on: the prompt, idle and heartbeat frames come
  // while it waits, whatever the load.
  for (const type of ["prompt", "idle", "ping", "pong", "error", "resize_ack"]) await one.until(type);
  await one.send({ v: 1, type: "key", key: "enter" });
  await one.until("exit");
  const r1 = await one.finish();
  assert.equal(r1.code, 0, r1.stderr);
  all.push(...one.frames);

  // Run 2: stopped / continued / signal frames, each signal sent once the previous state was reported
  // (sent blind, TSTP and CONT could both arrive before the stop was seen, and no "stopped" frame come).
  const two = new LiveCli(["run", ...UNSAFE, "--", "sleep", "30"]);
  await two.until("start");
  await two.send({ v: 1, type: "signal", signal: "TSTP" });
  await two.until("stopped");
  await two.send({ v: 1, type: "signal", signal: "CONT" });
  await two.until("continued");
  await two.send({ v: 1, type: "terminate", grace_ms: 100 });
  await two.until("exit");
  await two.finish();
  all.push(...two.frames);

  // Run 3: overflow.
  const r3 = await runCli(["run", ...UNSAFE, "--max-output", "100", "--", "yes"]);
  all.push(...r3.frames);

  for (const frame of all) {
    assert.ok(validate(frame), `${JSON.stringify(frame)}: ${JSON.stringify(validate.errors)}`);
  }
  const types = new Set(all.map((f) => f.type));
  const expected = [
    "start",
    "stdout",
    "stdin",
    "resize",
    "resize_ack",
    "prompt",
    "idle",
    "overflow",
    "signal",
    "stopped",
    "continued",
    "exit",
    "error",
    "ping",
    "pong",
  ];
  assert.deepEqual(expected.filter((t) => !types.has(t)), [], "every frame type was exercised");
  assert.ok(all.some((f) => f.type === "stdout" && f.binary === true), "a binary stdout frame was exercised");
  // The whole output, binary frames decoded too: "\377" may share a chunk (and a base64 frame) with
  // stty's "30 100", depending on when Specter read it.
  const bytes = one.frames.filter((f) => f.type === "stdout").flatMap((f) =>
    f.binary === true
      ? [...Uint8Array.from(atob(String(f.data)), (c) => c.charCodeAt(0))]
      : [...new TextEncoder().encode(String(f.data))]
  );
  const text = new TextDecoder().decode(new Uint8Array(bytes));
  assert.ok(text.includes("30 100"), text);
}, 60_000);

sessionTest("malformed driver lines get error frames and the session survives", async () => {
  const cli = new CliProcess(["run", ...UNSAFE, "--", "sh", "-c", 'read -r x; echo "got:$x"']);
  await cli.send(
    "garbage{",
    '{"v":2,"type":"ping"}',
    '{"type":"ping"}',
    { v: 1, type: "launch" },
    { v: 1, type: "key", key: "hyper-x" },
    { v: 1, type: "input" },
    { v: 1, type: "input", data: "x", extra: true },
    "[1,2]",
    { v: 1, type: "input", data: "hello\r" },
  );
  const { code, stdout } = await cli.result();
  const frames = framesOf(stdout);
  const errors = frames.filter((f) => f.type === "error").map((f) => f.code);
  assert.deepEqual(errors, [
    "E_PROTOCOL",
    "E_PROTOCOL_VERSION",
    "E_PROTOCOL_VERSION",
    "E_PROTOCOL",
    "E_PROTOCOL",
    "E_PROTOCOL",
    "E_PROTOCOL",
    "E_PROTOCOL",
  ]);
  const fieldError = frames.find((f) => f.type === "error" && String(f.message).includes('field "data"'));
  assert.ok(fieldError, "the message names the missing field");
  assert.ok(frames.some((f) => f.type === "stdout" && String(f.data).includes("got:hello")));
  assert.equal(code, 0);
});

sessionTest("--timeout ends the run with timed_out: true and exit code 124", async () => {
  const { code, frames } = await runCli(["run", ...UNSAFE, "--timeout", "300ms", "--", "sleep", "30"]);
  const exit = frames.at(-1)!;
  assert.equal(exit.type, "exit");
  assert.equal(exit.timed_out, true);
  assert.equal(code, 124);
});

sessionTest("stdin EOF keeps the session running unless --close-on-eof", async () => {
  const kept = await runCli(["run", ...UNSAFE, "--", "sh", "-c", "sleep 0.3; echo alive"]);
  assert.ok(kept.frames.some((f) => f.type === "stdout" && String(f.data).includes("alive")));
  assert.equal(kept.code, 0);
  const closed = await runCli(["run", ...UNSAFE, "--close-on-eof", "--", "sleep", "30"]);
  const exit = closed.frames.at(-1)!;
  assert.equal(exit.type, "exit");
  assert.equal(exit.signal, "HUP");
});

sessionTest("length-prefixed framing carries the same frames", async () => {
  const cli = new CliProcess(["run", ...UNSAFE, "--framing", "length", "--", "echo", "hi"]);
  await cli.closeStdin();
  const { code, stdout } = await cli.result();
  assert.equal(code, 0);
  const frames = decodeStream(stdout, "length") as Json[];
  assert.deepEqual(frames.map((f) => f.type), ["start", "stdout", "exit"]);
  assert.equal(frames[1]!.data, "hi\r\n");
});

sessionTest("a recording plays in asciinema (asciinema cat)", async () => {
  await withTempDir(async (dir) => {
    const cast = `${dir}/run.cast`;
    const cli = new CliProcess([
      "run",
      ...UNSAFE,
      "--record",
      cast,
      "--record-input",
      "--title",
      "demo",
      "--",
      "sh",
      "-c",
      'echo hello; read -r x; echo "x=$x"',
    ]);
    await cli.send({ v: 1, type: "input", data: "abc\r" });
    await cli.send({ v: 1, type: "resize", cols: 90, rows: 20 });
    assert.equal((await cli.result()).code, 0);
    const lines = (await Deno.readTextFile(cast)).trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(
      [lines[0].version, lines[0].width, lines[0].height, lines[0].title, lines[0].env.TERM],
      [2, 80, 24, "demo", "xterm-256color"],
    );
    const codes = new Set(lines.slice(1).map((e: unknown[]) => e[1]));
    assert.ok(codes.has("o") && codes.has("i"), [...codes].join(","));
    const played = await asciinemaCat(cast);
    assert.equal(played.code, 0, played.text);
    assert.ok(played.text.includes("hello") && played.text.includes("x=abc"), played.text);
  });
});

sessionTest("a recording stays valid when specter is killed mid-run", async () => {
  await withTempDir(async (dir) => {
    const cast = `${dir}/killed.cast`;
    const cli = new CliProcess([
      "run",
      ...UNSAFE,
      "--record",
      cast,
      "--",
      "sh",
      "-c",
      "echo before; exec sleep 30",
    ]);
    for (let i = 0; i < 100; i++) {
      if ((await Deno.readTextFile(cast).catch(() => "")).includes("before")) break;
      await sleep(50);
    }
    cli.child.kill("SIGKILL");
    const { stdout } = await cli.result();
    // Without a sandbox nothing kills the orphaned program when specter dies: do it here.
    const start = framesOf(stdout).find((f) => f.type === "start");
    if (start) Deno.kill(-Number(start.pid), "SIGKILL");
    const played = await asciinemaCat(cast);
    assert.equal(played.code, 0, played.text);
    assert.ok(played.text.includes("before"), played.text);
  });
});

sessionTest("exec prints one JSON result and mirrors the exit code", async () => {
  const ok = await runCli([
    "exec",
    ...UNSAFE,
    "--",
    "sh",
    "-c",
    "printf '\\033[32mgreen\\033[0m\\n50%%\\r100%%\\n'",
  ]);
  const result = JSON.parse(ok.stdout);
  assert.deepEqual(Object.keys(result).sort(), [
    "duration_ms",
    "exit_code",
    "output",
    "session_id",
    "signal",
    "success",
    "timed_out",
    "truncated",
  ]);
  assert.equal(result.output, "green\n100%\n");
  assert.equal(result.success, true);
  assert.equal(ok.code, 0);

  const failed = await runCli(["exec", ...UNSAFE, "--", "sh", "-c", "exit 3"]);
  assert.equal(JSON.parse(failed.stdout).exit_code, 3);
  assert.equal(failed.code, 3);

  const typed = await runCli([
    "exec",
    ...UNSAFE,
    "--input",
    "ping\\r",
    "--",
    "sh",
    "-c",
    'read -r x; echo "[$x]"',
  ]);
  assert.ok(JSON.parse(typed.stdout).output.includes("[ping]"));

  const timed = await runCli(["exec", ...UNSAFE, "--timeout", "200ms", "--", "sleep", "30"]);
  assert.equal(JSON.parse(timed.stdout).timed_out, true);
  assert.equal(timed.code, 124);

  const capped = await runCli(["exec", ...UNSAFE, "--max-output", "1K", "--", "yes"]);
  const cappedResult = JSON.parse(capped.stdout);
  assert.equal(cappedResult.truncated, true);
  assert.equal(cappedResult.output.length <= 1024, true);
});

sessionTest("errors have stable codes and exit codes", async () => {
  const missing = await runCli(["exec", ...UNSAFE, "--", "no-such-program-xyz"]);
  assert.equal(JSON.parse(missing.stdout).error.code, "E_SPAWN_NOT_FOUND");
  assert.equal(missing.code, 127);

  for (const flags of [["--unsafe-no-sandbox"], ["--sandbox", "none"], ["--sandbox", "external"]]) {
    const noAck = await runCli(["run", ...flags, "--", "true"]);
    assert.equal(noAck.code, 2, flags.join(" "));
    assert.equal(noAck.frames[0]!.code, "E_UNSAFE_ACK_REQUIRED");
    assert.match(noAck.stderr, /E_UNSAFE_ACK_REQUIRED: Sandbox mode "(none|external)" must be acknowledged/);
  }
  const unenforced = await runCli(["run", ...UNSAFE, "--policy", "basic", "--", "true"]);
  assert.match(unenforced.stderr, /E_USAGE: Flag "--policy" cannot apply with --sandbox none/);

  const badFlag = await runCli(["run", ...UNSAFE, "--idle", "5", "--", "true"]);
  assert.equal(badFlag.code, 2);
  assert.match(badFlag.stderr, /E_USAGE: Flag "--idle" needs a duration/);

  const unknown = await runCli(["frobnicate"]);
  assert.equal(unknown.code, 2);

  const relative = await runCli(["exec", ...UNSAFE, "--cwd", "tmp", "--", "true"]);
  assert.match(relative.stderr, /E_USAGE: Flag "--cwd" must be an absolute path/);

  const badCwd = await runCli(["exec", ...UNSAFE, "--cwd", "/no/such/dir", "--", "true"]);
  assert.equal(JSON.parse(badCwd.stdout).error.code, "E_SPAWN_CWD");
});

sessionTest("the unsafe mode prints a loud banner and start says sandbox: none", async () => {
  const { frames, stderr } = await runCli(["run", ...UNSAFE, "--", "true"]);
  assert.match(stderr, /WITHOUT A SANDBOX/);
  assert.equal(frames[0]!.sandbox, "none");
});

sessionTest("--version and help", async () => {
  const version = await runCli(["--version"]);
  assert.match(version.stdout, /^specter \d+\.\d+\.\d+\n$/);
  const help = await runCli(["help", "run"]);
  assert.match(help.stdout, /--framing ndjson\|length/);
  assert.equal((await runCli(["run", "--help"])).code, 0);
  for (const command of ["test", "verify"]) {
    const text = await runCli(["help", command]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`^Usage: specter ${command} `));
    const flag = await runCli([command, "--help"]);
    assert.equal(flag.stdout, text.stdout);
  }
  const unknown = await runCli(["help", "nope"]);
  assert.match(
    unknown.stderr,
    /commands: run, exec, policy, sandbox, test, replay, verify, audit, view, agent, mcp, new, attach, ls, send, kill, logs, history, daemon, url, keeper\)/,
  );
}, 90_000); // Ten CLI starts one after another: on a loaded 2-core CI machine, 30 s was not always enough.

sessionTest("--env passes only the minimal environment plus what was asked", async () => {
  Deno.env.set("SPECTER_CLI_SECRET", "hunter2");
  try {
    const { stdout } = await runCli(["exec", ...UNSAFE, "--env", "EXTRA=1", "--", "env"]);
    const names = JSON.parse(stdout).output.trim().split("\n").map((l: string) => l.split("=")[0]).sort();
    assert.deepEqual(names, ["EXTRA", "HOME", "LANG", "PATH", "TERM"]);
  } finally {
    Deno.env.delete("SPECTER_CLI_SECRET");
  }
});

sessionTest("SIGTERM to specter terminates the program and still prints exit", async () => {
  const cli = new CliProcess(["run", ...UNSAFE, "--", "sh", "-c", "echo started; sleep 30"]);
  await cli.waitForStdout(`"data":"started`);
  cli.child.kill("SIGTERM");
  const { code, stdout } = await cli.result();
  const frames = framesOf(stdout);
  const start = frames.find((f) => f.type === "start")!;
  const exit = frames.at(-1)!;
  assert.equal(exit.type, "exit");
  assert.equal(exit.signal, "HUP");
  assert.equal(code, 128 + 1);
  assert.ok(!alive(Number(start.pid)), "the program is gone");
});

sessionTest("a second SIGINT kills a program that ignores the first", async () => {
  const cli = new CliProcess([
    "run",
    ...UNSAFE,
    "--grace",
    "30s",
    "--",
    "sh",
    "-c",
    "trap '' HUP TERM INT; echo up; sleep 30",
  ]);
  await cli.waitForStdout(`"data":"up`);
  cli.child.kill("SIGINT");
  await sleep(200);
  cli.child.kill("SIGINT");
  const { stdout } = await cli.result();
  assert.equal(framesOf(stdout).at(-1)!.signal, "KILL");
});

sessionTest("exit codes mirror signals by number (SEGV → 139)", async () => {
  const { code, stdout } = await runCli(["exec", ...UNSAFE, "--", "sh", "-c", "kill -SEGV $$"]);
  assert.equal(JSON.parse(stdout).signal, "SEGV");
  assert.equal(code, 139);
});

sessionTest("fds inherited by specter do not leak into the program", async () => {
  const script = `exec 7</dev/null; exec "${Deno.execPath()}" run -A "${ROOT}/main.ts" exec ${
    UNSAFE.join(" ")
  } -- ls /proc/self/fd`;
  const result = await new Deno.Command("bash", { args: ["-c", script], stdout: "piped", stderr: "null" })
    .output();
  const fds = JSON.parse(new TextDecoder().decode(result.stdout)).output.trim().split(/\s+/);
  assert.ok(!fds.includes("7"), `fd 7 leaked: ${fds.join(",")}`);
});

sessionTest("usage errors of run are also error frames", async () => {
  const { code, frames } = await runCli(["run", "--bogus"]);
  assert.equal(code, 2);
  assert.equal(frames[0]!.code, "E_USAGE");
});
