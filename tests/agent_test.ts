/**
 * The agent tools on real programs: REPLs driven through write_stdin, the empty-poll wait, truncation that
 * keeps error lines and read_output that gives the rest, pruning at the cap, the idle sweep, full-screen
 * programs in the parsed view, pager prompts, and the sandbox the host chose.
 */
import assert from "node:assert/strict";
import { AgentTools, tokenCount } from "../src/agent/mod.ts";
import { NO_SANDBOX, ROOT } from "./_helpers.ts";

const sanitize = { sanitizeOps: false, sanitizeResources: false };

/** Runs `fn` with tools that run sessions unsandboxed (the sandbox is tested on its own below). */
async function withTools(
  fn: (tools: AgentTools) => Promise<void>,
  options: { maxSessions?: number; idleTimeoutMs?: number } = {},
): Promise<void> {
  const tools = new AgentTools({ base: { sandbox: NO_SANDBOX, cwd: ROOT }, ...options });
  try {
    await fn(tools);
  } finally {
    await tools.close();
  }
}

Deno.test({
  name: "agent: the python3 REPL through write_stdin, each call returning at the prompt",
  ...sanitize,
  fn: () =>
    withTools(async (tools) => {
      const start = await tools.execCommand({ cmd: ["python3", "-q"], yield_time_ms: 10_000 });
      assert.equal(start.running, true);
      assert.equal(start.returned_on, "prompt");
      assert.match(start.output, />>>/);
      const sum = await tools.writeStdin({ session_id: start.session_id!, chars: "6*7\r" });
      assert.equal(sum.returned_on, "prompt");
      assert.match(sum.output, /^42$/m);
      assert.ok(sum.wall_time_ms < 5000, `${sum.wall_time_ms} ms`);
      const bye = await tools.writeStdin({ session_id: start.session_id!, chars: "raise SystemExit(4)\r" });
      assert.equal(bye.returned_on, "exit");
      assert.equal(bye.running, false);
      assert.equal(bye.exit_code, 4);
      assert.deepEqual(bye.last_lines?.at(-1), ">>> raise SystemExit(4)");
    }),
});

Deno.test({
  name: "agent: a 20 s build polled with empty writes takes at most 3 calls",
  ...sanitize,
  fn: () =>
    withTools(async (tools) => {
      const script = 'for i in $(seq 1 20); do echo "compiling step $i"; sleep 1; done; echo BUILD OK';
      const calls = [await tools.execCommand({ cmd: script })];
      while (calls.at(-1)!.running && calls.length < 10) {
        calls.push(await tools.writeStdin({ session_id: calls[0]!.session_id! }));
      }
      assert.ok(calls.length <= 3, `${calls.length} calls: ${calls.map((c) => c.returned_on).join(", ")}`);
      assert.equal(calls.at(-1)!.exit_code, 0);
      assert.match(calls.map((c) => c.output).join(""), /compiling step 20\nBUILD OK/);
    }),
});

Deno.test({
  name:
    "agent: an error from the middle of a long failing build survives truncation; read_output has all of it",
  ...sanitize,
  fn: () =>
    withTools(async (tools) => {
      const script = 'for i in $(seq 1 3000); do if [ $i = 1500 ]; then echo "src/net.c:88: error: ' +
        'undefined symbol parse_port"; else echo "compiling unit $i of 3000"; fi; done; ' +
        "echo 'BUILD FAILED: 1 error'; exit 2";
      const result = await tools.execCommand({ cmd: script, max_output_tokens: 600 });
      assert.equal(result.exit_code, 2);
      assert.equal(result.truncated, true);
      assert.ok(tokenCount(result.output) <= 600, `${tokenCount(result.output)} tokens`);
      assert.ok(result.original_token_count > 10_000, `${result.original_token_count}`);
      assert.match(result.output, /^L\d+: src\/net\.c:88: error: undefined symbol parse_port$/m);
      assert.match(result.output, /BUILD FAILED: 1 error\n?$/);
      assert.match(result.output, /read_output \{"session_id": "\d+", "from_seq": 0, "to_seq": \d+\}/);
      const all = await tools.readOutput({
        session_id: result.session_id!,
        from_seq: result.from_seq,
        max_output_tokens: 1_000_000,
      });
      assert.equal(all.truncated, false);
      const lines = all.output.split("\n");
      for (const n of [1, 1499, 1501, 3000]) assert.ok(lines.includes(`compiling unit ${n} of 3000`), `${n}`);
      assert.ok(lines.includes("src/net.c:88: error: undefined symbol parse_port"));
      assert.equal(all.original_token_count, tokenCount(all.output));
    }),
});

Deno.test({
  name: "agent: the 65th session prunes the least recently used exited one, then the least recently used",
  ...sanitize,
  fn: () =>
    withTools(async (tools) => {
      const ids: string[] = [];
      for (let i = 0; i < 64; i++) {
        const cmd = i === 4 ? ["true"] : ["sleep", "60"];
        ids.push((await tools.execCommand({ cmd, yield_time_ms: 250 })).session_id!);
      }
      const exited = tools.get(ids[4]!);
      await exited.session.exited;
      const sixtyFifth = await tools.execCommand({ cmd: ["sleep", "60"], yield_time_ms: 250 });
      assert.equal(sixtyFifth.pruned, ids[4]);
      const sixtySixth = await tools.execCommand({ cmd: ["sleep", "60"], yield_time_ms: 250 });
      assert.equal(sixtySixth.pruned, ids[0]); // None exited: the least recently used.
      const listed = tools.listSessions().sessions.map((s) => s.session_id);
      assert.equal(listed.length, 64);
      assert.ok(!listed.includes(ids[0]!) && !listed.includes(ids[4]!));
      await assert.rejects(
        tools.writeStdin({ session_id: ids[0]! }),
        (e: unknown) => (e as { code?: string }).code === "E_SESSION_UNKNOWN",
      );
    }),
});

Deno.test({
  name: "agent: env that changes how programs load is refused; a failed start at the cap prunes nobody",
  ...sanitize,
  fn: () =>
    withTools(async (tools) => {
      for (const name of ["LD_PRELOAD", "LD_LIBRARY_PATH", "GLIBC_TUNABLES", "BASH_ENV", "GCONV_PATH"]) {
        await assert.rejects(
          tools.execCommand({ cmd: ["true"], env: { [name]: "/tmp/x" } }),
          (e: unknown) => (e as { code?: string }).code === "E_USAGE",
          name,
        );
      }
      const kept = await tools.execCommand({ cmd: ["sleep", "60"], yield_time_ms: 250 });
      await assert.rejects(
        tools.execCommand({ cmd: ["/nonexistent/program"] }),
        (e: unknown) => (e as { code?: string }).code === "E_SPAWN_NOT_FOUND",
      );
      assert.deepEqual(tools.listSessions().sessions.map((s) => s.session_id), [kept.session_id]);
    }, { maxSessions: 1 }),
});

Deno.test({
  name: "agent: the idle sweep ends a forgotten session, listed as timed out with its exit",
  ...sanitize,
  fn: () =>
    withTools(async (tools) => {
      const started = await tools.execCommand({ cmd: ["sleep", "60"], yield_time_ms: 250 });
      const deadline = Date.now() + 10_000;
      let listing = tools.listSessions().sessions[0]!;
      while (listing.running && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        listing = tools.listSessions().sessions[0]!;
      }
      assert.equal(listing.session_id, started.session_id);
      assert.equal(listing.running, false);
      assert.equal(listing.timed_out, true);
      const last = await tools.writeStdin({ session_id: started.session_id!, yield_time_ms: 5000 });
      assert.equal(last.timed_out, true);
      assert.equal(last.returned_on, "exit");
      assert.ok(Array.isArray(last.last_lines));
    }, { idleTimeoutMs: 500 }),
});

Deno.test({
  name: "agent: a full-screen program in the parsed view is its screen, then the rows that changed",
  ...sanitize,
  fn: () =>
    withTools(async (tools) => {
      const start = await tools.execCommand({
        cmd: ["python3", `${ROOT}/fixtures/tuis/fullscreen.py`],
        token_mode: "parsed",
        yield_time_ms: 1500,
      });
      assert.equal(start.screen, "alternate");
      assert.match(start.output, /^\[screen, alternate\]$/m);
      assert.match(start.output, /Specter fullscreen fixture/);
      const key = await tools.writeStdin({
        session_id: start.session_id!,
        chars: "x",
        token_mode: "parsed",
        yield_time_ms: 1000,
      });
      assert.match(key.output, /^row \d+: .*last key: x/m);
      assert.ok(!/Specter fullscreen fixture/.test(key.output), "unchanged rows are not repeated");
      const quit = await tools.writeStdin({ session_id: start.session_id!, chars: "q" });
      assert.equal(quit.exit_code, 0);
      assert.equal(quit.screen, "normal");
    }),
});

Deno.test({
  name: "agent: a pager's --More-- is a prompt: the call returns there and says so",
  ...sanitize,
  fn: () =>
    withTools(async (tools) => {
      const start = await tools.execCommand({ cmd: ["python3", `${ROOT}/fixtures/tuis/netcli.py`] });
      assert.equal(start.returned_on, "prompt");
      const page = await tools.writeStdin({ session_id: start.session_id!, chars: "show running-config\r" });
      assert.equal(page.returned_on, "prompt");
      assert.match(page.output, /^\[pager prompt: --More--\]$/m);
      assert.match(page.output, /^hostname edge-rtr-01$/m);
      const quit = await tools.writeStdin({ session_id: start.session_id!, chars: "q" });
      assert.equal(quit.returned_on, "prompt");
      assert.ok(!quit.output.includes("--More--"), quit.output);
    }),
});

Deno.test({
  name:
    "agent: a command in a persistent bash returns on its OSC 133 mark with its exit code, long before the yield",
  ...sanitize,
  fn: () =>
    withTools(async (tools) => {
      const shell = await tools.execCommand({ cmd: ["bash", "--norc", "--noprofile"] });
      assert.equal(shell.returned_on, "prompt");
      const started = performance.now();
      const build = await tools.writeStdin({
        session_id: shell.session_id!,
        chars: "sleep 0.5; echo built; false\r",
        yield_time_ms: 30_000,
      });
      assert.ok(performance.now() - started < 10_000);
      assert.equal(build.returned_on, "command");
      assert.deepEqual({ ...build.command, duration_ms: 0 }, {
        command: "sleep 0.5; echo built; false",
        exit_code: 1,
        duration_ms: 0,
        reported_by: "shell",
      });
      assert.ok(build.command!.duration_ms >= 450, `${build.command!.duration_ms}`);
      assert.match(build.output, /^built$/m);
      assert.ok(!build.output.includes("133;"), "the marks are not in the output");
      assert.equal(build.running, true); // The shell goes on.
      const ok = await tools.writeStdin({ session_id: shell.session_id!, chars: "true\r" });
      assert.equal(ok.command?.exit_code, 0);
    }),
});

Deno.test({
  name: "agent: sessions run under the host's policy (the default: sandboxed)",
  ...sanitize,
  async fn() {
    const tools = new AgentTools({ base: { cwd: ROOT } }); // The default: sandboxed, default preset.
    try {
      const result = await tools.execCommand({ cmd: "cat /etc/shadow; echo rc=$?" });
      assert.match(result.output, /rc=[1-9]/);
      assert.ok(!/root:/.test(result.output));
    } finally {
      await tools.close();
    }
  },
});

Deno.test({
  name: "agent: the parsed view models the session's own terminal size, not 80x24",
  ...sanitize,
  async fn() {
    const tools = new AgentTools({ base: { sandbox: NO_SANDBOX, cwd: ROOT, cols: 120, rows: 10 } });
    try {
      // A full-screen program writing at column 101 of row 9: on an 80x24 model it would wrap or vanish.
      const script =
        "import sys,time; sys.stdout.write('\\x1b[?1049h\\x1b[H\\x1b[2Jtop\\x1b[9;101Hfar-right'); " +
        "sys.stdout.flush(); time.sleep(1)";
      const result = await tools.execCommand({ cmd: ["python3", "-c", script], token_mode: "parsed" });
      assert.match(result.output, /^top$/m);
      const row = result.output.split("\n").find((line) => line.includes("far-right"));
      assert.equal(row, `${" ".repeat(100)}far-right`);
      const again = await tools.readOutput({
        session_id: result.session_id ?? "1",
        from_seq: 0,
        token_mode: "parsed",
      });
      assert.ok(again.output.includes(`${" ".repeat(100)}far-right`), again.output);
      assert.equal(again.returned_on, "exit");
      // A read while the program runs returns at once and says so.
      const repl = await tools.execCommand({ cmd: ["python3", "-q"] });
      const read = await tools.readOutput({ session_id: repl.session_id!, from_seq: 0 });
      assert.equal(read.returned_on, "yield");
      assert.equal(read.running, true);
    } finally {
      await tools.close();
    }
  },
});

/** A program that reports whether fds 0-2 are terminals, then echoes one line of stdin upper-cased. */
const PROBE = [
  "python3",
  "-c",
  "import os,sys; print(os.isatty(0), os.isatty(1), os.isatty(2), flush=True); " +
  "print(sys.stdin.readline().strip().upper(), flush=True); print('err', file=sys.stderr)",
];

async function probeWithoutTty(tools: AgentTools): Promise<void> {
  const started = await tools.execCommand({ cmd: PROBE, tty: false, yield_time_ms: 1000 });
  assert.equal(started.running, true, JSON.stringify(started));
  assert.equal(started.output.trim(), "False False False");
  const answer = await tools.writeStdin({ session_id: started.session_id!, chars: "hello\n" });
  assert.equal(answer.exit_code, 0, JSON.stringify(answer));
  assert.match(answer.output, /^HELLO$/m);
  assert.match(answer.output, /^err$/m, "stderr comes too");
  assert.ok(!/hello/.test(answer.output), "no echo: nothing types back what was sent");
  const raw = await tools.readOutput({ session_id: started.session_id!, from_seq: 0, token_mode: "raw" });
  assert.ok(raw.output.includes("HELLO\n") && !raw.output.includes("\r\n"), "plain newlines, no \\r\\n");
}

Deno.test({
  name: "agent: tty false runs the program on a socket: not a terminal, no echo, stdin read as from a pipe",
  ...sanitize,
  fn: () => withTools(probeWithoutTty),
});

Deno.test({
  name: "agent: tty false in the sandbox too",
  ...sanitize,
  async fn() {
    const tools = new AgentTools({ base: { cwd: ROOT } }); // The default: sandboxed.
    try {
      await probeWithoutTty(tools);
    } finally {
      await tools.close();
    }
  },
});
