// The TypeScript client against a real `specter agent` (sandboxed programs, the default policy), run as
// written under Node (`node --test clients/ts/test/`) and under Deno (`deno test -A clients/ts/test/`).
// The agent comes from $SPECTER_COMMAND (the repository's tests set it to `deno run -A main.ts agent`).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentCommand, Client, findSpecter, shellWords, SpecterError } from "../dist/index.js";

/** Pids of every process below `pid` (from /proc). */
function descendants(pid) {
  const children = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(name));
    } catch {
      // The process ended while we looked.
    }
  }
  const found = [];
  for (const queue = [pid]; queue.length > 0;) {
    for (const child of children.get(queue.shift()) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
  } catch {
    return false;
  }
}

/** A program that runs for a minute (the strict policy runs nothing but the program itself). */
const SLEEP = ["python3", "-c", "import time; time.sleep(60)"];

async function withClient(fn) {
  const client = new Client();
  try {
    await fn(client);
  } finally {
    await client.close();
  }
}

test("the agent's command: an option, else $SPECTER_COMMAND as shell words, else specter agent", () => {
  assert.deepEqual(shellWords(`deno run -A "/opt/my specter/main.ts" agent --env 'A=b c' x\\ y`), [
    "deno",
    "run",
    "-A",
    "/opt/my specter/main.ts",
    "agent",
    "--env",
    "A=b c",
    "x y",
  ]);
  assert.throws(() => shellWords("a 'b"), { code: "E_AGENT_START" });
  assert.deepEqual(agentCommand({ command: ["x", "agent"] }, {}), ["x", "agent"]);
  assert.deepEqual(agentCommand({}, { SPECTER_COMMAND: "deno run -A main.ts agent" }), [
    "deno",
    "run",
    "-A",
    "main.ts",
    "agent",
  ]);
  assert.deepEqual(agentCommand({}, { HOME: "/nonexistent" }), ["specter", "agent"]);
});

test("specter is found on PATH, else where ./scripts/dev install puts it", () => {
  const home = mkdtempSync(join(tmpdir(), "specter-home-"));
  try {
    const bin = join(home, ".local", "bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "specter"), "#!/bin/sh\n", { mode: 0o755 });
    const other = join(home, "other");
    mkdirSync(other);
    writeFileSync(join(other, "specter"), "not executable", { mode: 0o644 });
    // Not on PATH (and the one on PATH is not executable): the installed launcher.
    assert.deepEqual(agentCommand({}, { HOME: home, PATH: other }), [join(bin, "specter"), "agent"]);
    assert.equal(findSpecter({ HOME: "/nonexistent", PATH: `${other}:${bin}` }), join(bin, "specter"));
    assert.equal(findSpecter({ HOME: "/nonexistent", XDG_BIN_HOME: bin }), join(bin, "specter"));
    assert.equal(findSpecter({ HOME: "/nonexistent", PATH: other }), "specter");
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test("an agent that cannot start is E_AGENT_START in the first call", async () => {
  const client = new Client({ command: ["/nonexistent/specter", "agent"] });
  await assert.rejects(client.listSessions(), { code: "E_AGENT_START" });
  await client.close();
});

test("a python3 REPL driven through writeStdin, each call returning at the prompt", () =>
  withClient(async (client) => {
    const repl = await client.execCommand({ cmd: ["python3", "-q"] });
    assert.equal(repl.returned_on, "prompt");
    assert.equal(repl.running, true);
    const answer = await client.writeStdin({ session_id: repl.session_id, chars: "6 * 7\r" });
    assert.equal(answer.returned_on, "prompt");
    assert.match(answer.output, /^42$/m);
  }));

test("a command's exit code, and an error with its stable code", () =>
  withClient(async (client) => {
    const failed = await client.execCommand({ cmd: "echo out; exit 3" });
    assert.equal(failed.exit_code, 3);
    assert.equal(failed.running, false);
    assert.match(failed.output, /^out$/m);
    await assert.rejects(client.writeStdin({ session_id: "nope", chars: "x" }), (error) => {
      assert.ok(error instanceof SpecterError);
      assert.equal(error.code, "E_SESSION_UNKNOWN");
      return true;
    });
  }));

test("an empty writeStdin waits for the program instead of returning nothing", () =>
  withClient(async (client) => {
    const build = await client.execCommand({
      cmd: ["python3", "-c", "import time; time.sleep(2); print('built')"],
      yield_time_ms: 250,
    });
    assert.equal(build.running, true);
    const started = Date.now();
    const waited = await client.writeStdin({ session_id: build.session_id, chars: "" });
    assert.equal(waited.returned_on, "exit");
    assert.match(waited.output, /built/);
    assert.ok(Date.now() - started >= 1000, "it waited");
  }));

test("readOutput returns the middle that truncation cut", () =>
  withClient(async (client) => {
    const long = await client.execCommand({
      cmd: "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); echo line $i; done",
      max_output_tokens: 200,
    });
    assert.equal(long.truncated, true);
    assert.doesNotMatch(long.output, /^line 1500$/m);
    const all = await client.readOutput({
      session_id: long.session_id ?? "1",
      from_seq: long.from_seq,
      max_output_tokens: 100_000,
    });
    assert.match(all.output, /^line 1500$/m);
    assert.match(all.output, /^line 3000$/m);
  }));

test("frames from a subscription, and expect on them", () =>
  withClient(async (client) => {
    const session = await client.spawn(["python3", "-q"]);
    const frames = await session.frames({ mode: "compact" });
    await session.send("print('ab' * 3)\r");
    const found = await session.expect(/(?:ab){3}/); // Not the echo of what was typed.
    assert.equal(found.match[0], "ababab");
    await session.send("exit()\r");
    const types = [];
    for await (const frame of frames) types.push(frame.type);
    assert.equal(types.at(-1), "exit");
    await assert.rejects(frames.expect("never", { timeoutMs: 100 }), { code: "E_SESSION_CLOSED" });
    const run = [];
    for await (const frame of client.run(["python3", "-c", "print('from run')"], { mode: "compact" })) {
      run.push(frame);
    }
    assert.equal(run[0].type, "start");
    assert.ok(run.some((f) => f.type === "text" && f.data.includes("from run")));
    assert.equal(run.at(-1).type, "exit");
  }));

test("expect times out with E_EXPECT_TIMEOUT and loses no frame", () =>
  withClient(async (client) => {
    const session = await client.spawn(["python3", "-q"]);
    await session.frames();
    await assert.rejects(session.expect("never printed", { timeoutMs: 300 }), { code: "E_EXPECT_TIMEOUT" });
    await session.send("print(40 + 2)\r");
    assert.equal((await session.expect(/^\d+\r?$/m)).match[0].trim(), "42");
    await session.close();
  }));

test("lease and release: a pooled shell runs commands and returns on their exit codes", () =>
  withClient(async (client) => {
    const lease = await client.lease();
    const result = await lease.exec("(exit 4)");
    assert.equal(result.returned_on, "command");
    assert.equal(result.command.exit_code, 4);
    await client.release(lease);
    const again = await client.lease();
    assert.equal(again.session.id, lease.session.id, "the released shell is leased again");
  }));

test("the agent dying mid-call is a typed error in the caller, never a hang", async () => {
  const client = new Client();
  const shell = await client.execCommand({ cmd: SLEEP, yield_time_ms: 250 });
  const waiting = client.writeStdin({ session_id: shell.session_id, chars: "" }); // Waits up to 30 s.
  const frames = await client.subscribe(shell.session_id);
  setTimeout(() => process.kill(client.pid, "SIGKILL"), 200);
  const started = Date.now();
  await assert.rejects(waiting, (error) => {
    assert.ok(error instanceof SpecterError);
    assert.equal(error.code, "E_AGENT_EXITED");
    return true;
  });
  await assert.rejects(
    (async () => {
      for await (const _ of frames) { /* drain */ }
    })(),
    { code: "E_AGENT_EXITED" },
  );
  assert.ok(Date.now() - started < 5000);
  await assert.rejects(client.listSessions(), { code: "E_AGENT_EXITED" });
  await client.close();
});

test("close() ends the agent and every program it ran", async () => {
  const client = new Client();
  await client.execCommand({ cmd: ["python3", "-q"] });
  await client.execCommand({ cmd: SLEEP, yield_time_ms: 250 });
  const pid = client.pid;
  const below = descendants(pid);
  assert.ok(below.length >= 2, `processes below the agent: ${below}`);
  const exit = await client.close();
  assert.equal(exit.code, 0);
  assert.equal(alive(pid), false);
  for (let i = 0; i < 50 && below.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(below.filter(alive), [], "nothing left behind");
  await assert.rejects(client.listSessions(), { code: "E_CLIENT_CLOSED" });
});

test("two expects match within one frame; leaving run early ends the program; a busy lease is not pooled", () =>
  withClient(async (client) => {
    const session = await client.spawn(["python3", "-q"]);
    await session.frames();
    await session.send("print('foo' + chr(10) + 'bar')\r");
    assert.equal((await session.expect(/^foo\r?$/m)).match[0].trim(), "foo");
    assert.equal((await session.expect(/^bar\r?$/m)).match[0].trim(), "bar");

    const ticker = ["python3", "-c", "import time\nwhile True: print('tick', flush=True); time.sleep(0.1)"];
    let id;
    for await (const frame of client.run(ticker)) {
      if (frame.type === "start") id = frame.session?.id;
      if (frame.type === "stdout" && frame.data.includes("tick")) break;
    }
    const ended = async () => (await client.listSessions()).filter((s) => s.argv.includes("-c") && s.running);
    for (let i = 0; i < 50 && (await ended()).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await ended(), [], `the ticker (${id}) ends when the loop is left`);

    const lease = await client.lease();
    const busy = await lease.exec("read -t 30", { yield_time_ms: 500 });
    assert.equal(busy.returned_on, "yield");
    await client.release(lease);
    const next = await client.lease();
    assert.notEqual(next.session.id, lease.session.id, "a shell still running a command is not handed out");
  }));
