/**
 * The in-process SDK on real sandboxed programs: `Session.spawn` with frames in a view, `expect`, `send`,
 * `press` and `screen()`; `specter.exec` returning the `exec_command` result; a pool's lease and release.
 */
import assert from "node:assert/strict";
import { createSpecter, Session, SessionPool } from "../src/sdk/mod.ts";
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
      pool.release(lease);
      assert.equal((await pool.lease()).sessionId, lease.sessionId);
      const other = await pool.lease();
      assert.notEqual(other.sessionId, lease.sessionId);
    } finally {
      await specter.close();
    }
  },
});
