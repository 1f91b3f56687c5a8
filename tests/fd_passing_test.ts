/**
 * A terminal outlives the process that opened it: a helper process starts `cat` on a terminal and passes
 * the master over a unix socket (SCM_RIGHTS); after `kill -9` of the helper, the terminal held here still
 * carries input to `cat` and its output back. What lets a keeper hand sessions to a restarted daemon.
 */
import assert from "node:assert/strict";
import { closeQuietly, libc, receiveFds, seqpacketPair, spawnOnPty } from "../src/pty/mod.ts";
import { DENO, ROOT } from "./_helpers.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test({
  name: "fd passing: a terminal passed by a process that is then SIGKILLed keeps working",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const lib = libc();
    const [ours, theirs] = seqpacketPair();
    const sender = spawnOnPty({
      argv: [DENO, "run", "-A", `${ROOT}/tests/_fd_sender.ts`],
      env: { PATH: "/usr/bin:/bin", HOME: Deno.env.get("HOME") ?? "/tmp" },
      cols: 80,
      rows: 24,
      inheritFds: [{ fd: theirs, target: 3 }],
    });
    closeQuietly(theirs);
    let master = -1;
    let cat = -1;
    try {
      for (let waited = 0; master < 0; waited += 20) {
        const got = receiveFds(ours, { dontWait: true });
        assert.notEqual(got, null, "the helper closed the socket without sending");
        if (got !== "again" && got !== null) {
          assert.equal(got.fds.length, 1);
          master = got.fds[0]!;
          cat = Number(new TextDecoder().decode(got.payload));
          break;
        }
        assert.ok(waited < 20_000, "the helper sent nothing within 20 s");
        await sleep(20);
      }
      // The helper dies at once; `cat` lives on, its terminal held only here.
      lib.sym.kill(sender.pid, lib.table.signals.KILL);
      const status = new Int32Array(1);
      while (lib.sym.waitpid(sender.pid, new Uint8Array(status.buffer), 0) < 0 && lib.errno() === 4);
      closeQuietly(sender.master);
      await sleep(100);
      assert.equal(lib.sym.kill(cat, 0), 0, "cat survived its spawner");
      const hi = new TextEncoder().encode("hi\n");
      assert.equal(Number(lib.sym.write(master, hi, BigInt(hi.length))), hi.length);
      let text = "";
      const buffer = new Uint8Array(256);
      for (let waited = 0; !text.includes("hi\r\nhi\r\n") && waited < 5000; waited += 10) {
        const n = Number(lib.sym.read(master, buffer, BigInt(buffer.length)));
        if (n > 0) text += new TextDecoder().decode(buffer.subarray(0, n));
        else await sleep(10);
      }
      assert.equal(text, "hi\r\nhi\r\n", "the terminal's echo, then cat's copy");
    } finally {
      if (cat > 0) lib.sym.kill(cat, lib.table.signals.KILL);
      if (master >= 0) closeQuietly(master);
      closeQuietly(ours);
    }
  },
});
