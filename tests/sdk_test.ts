/**
 * The in-process SDK on real sandboxed programs: `Session.spawn` with frames in a view, `expect`, `send`,
 * `press` and `screen()`; `specter.exec` returning the `exec_command` result; a pool's lease and release.
 */
import assert from "node:assert/strict";
import "./_helpers.ts"; // Runs' audit logs and command rows go to a temporary XDG home, not the person's.
import { createSpecter, run, Session, SessionPool } from "../src/sdk/mod.ts";
import { SpecterError } from "../src/errors.ts";

const sanitize = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "sdk: a sandboxed python3 REPL through send and expect, its screen, its frames in a view",
  ...sanitize,
  async fn() {
    const repl = await Session.spawn(["python3", "-q"]);
    try {
      await repl.expect(">>> ");
      repl.send("6 * 7\r");
      const { match } = await repl.expect(/^(\d+)\r?$/m);
      assert.equal(match[1], "42");
      await repl.expect(">>> ");
      assert.match(await repl.screen(), /^42$/m);
      await assert.rejects(repl.expect("never printed", { timeoutMs: 200 }), (error: unknown) => {
        assert.ok(error instanceof SpecterError);
        assert.equal(error.code, "E_EXPECT_TIMEOUT");
        return true;
      });
      repl.send("print('done')\r");
      await repl.expect(/^done/m); // Nothing was lost to the timeout.
      // ctrl-d only once readline reads again: between its prompts the REPL's terminal is canonical, where
      // the kernel turns ^D into an end of line, which readline (raw) then never reads as end of input;
      // pressed there, the REPL would wait forever (it did once in CI, under load).
      await repl.expect(">>> ");
      repl.press("ctrl-d");
      const kinds: string[] = [];
      const texts: string[] = [];
      for await (const frame of repl.frames({ mode: "compact" })) {
        kinds.push(frame.type);
        if (frame.type === "text") texts.push(frame.data);
      }
      assert.equal(kinds[0], "start");
      assert.equal(kinds.at(-1), "exit");
      assert.match(texts.join(""), /^42$/m);
      assert.ok(!texts.join("").includes("\x1b"), "no escape sequences in the compact view");
      await assert.rejects(repl.expect("more"), { code: "E_SESSION_CLOSED" });
    } finally {
      await repl.close();
    }
  },
});

Deno.test({
  name: "sdk: specter.exec returns the exec_command result; a pool leases shells and takes them back",
  ...sanitize,
  async fn() {
    const specter = createSpecter(); // The default: bwrap, the strict preset.
    try {
      const failed = await specter.exec("echo out; exit 3");
      assert.equal(failed.exit_code, 3);
      assert.equal(failed.returned_on, "exit");
      assert.match(failed.output, /^out$/m);
      assert.match(failed.shell ?? "", /\/bash$/);
      const pool = new SessionPool(specter);
      const lease = await pool.lease();
      const result = await lease.exec("(exit 5)");
      assert.equal(result.returned_on, "command");
      assert.equal(result.command?.exit_code, 5);
      await pool.release(lease);
      const again = await pool.lease();
      assert.equal(again.sessionId, lease.sessionId);
      const other = await pool.lease();
      assert.notEqual(other.sessionId, lease.sessionId);
      // A shell still running a command is ended on release, not handed out again.
      assert.equal((await again.exec("read -t 30", { yield_time_ms: 500 })).returned_on, "yield");
      await pool.release(again);
      const third = await pool.lease();
      assert.notEqual(third.sessionId, again.sessionId);
      assert.ok(!specter.listSessions().some((s) => s.session_id === again.sessionId && s.running));
    } finally {
      await specter.close();
    }
  },
});

Deno.test({
  name: "sdk: run yields a sandboxed program's frames in a view until it ends",
  ...sanitize,
  async fn() {
    const frames = [];
    for await (
      const frame of run(["python3", "-c", "print('\\x1b[31mred\\x1b[0m'); print('done')"], {
        mode: "compact",
      })
    ) {
      frames.push(frame);
    }
    assert.equal(frames[0]?.type, "start");
    assert.equal(frames.at(-1)?.type, "exit");
    const text = frames.flatMap((f) => f.type === "text" ? [f.data] : []).join("");
    assert.equal(text, "red\ndone\n");
  },
});

Deno.test({
  name:
    "sdk: a session printing more than the frame buffer (8 MiB) runs to its end with nobody reading frames",
  ...sanitize,
  async fn() {
    const big = await Session.spawn([
      "python3",
      "-c",
      "import sys; sys.stdout.write('x' * (12 << 20)); print('END')",
    ]);
    try {
      await big.expect(/END/, { timeoutMs: 30_000 });
      const exit = await big.core.exited;
      assert.equal(exit.code, 0);
    } finally {
      await big.close();
    }
  },
});
