/**
 * Specter's own state is out of every sandbox's reach, not only daemon sessions': a run whose read grant
 * covers where Specter keeps its state by default (the daemon's state with its sessions' nonces, the
 * persistent homes, other runs' audit logs, the command log) sees those directories empty, and a write
 * grant over one is refused. The victim is real: a daemon at the default places with a persistent bash
 * session that saved a token in its home, and an earlier run whose audit log holds its argv. The attacker
 * is a later `exec` granted the whole tree, grepping it for the token, the argv and any nonce.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DENO, ROOT, runCli, sessionTest } from "../_helpers.ts";
import { cleanUp, create, ready, specter, type TestDaemon, whereArgs } from "../_daemon.ts";
import { withHostDir } from "./_sandbox.ts";

/** A daemon at the default places of `env` (its socket, state, persistent homes and command log). */
async function defaultDaemon(home: string, env: Record<string, string>): Promise<TestDaemon> {
  const place = {
    dir: home,
    socket: join(home, "run", "specter", "daemon.sock"),
    stateDir: join(home, "state", "specter", "daemon"),
    log: [] as string[],
  };
  const process = new Deno.Command(DENO, {
    args: [
      "run",
      "-A",
      join(ROOT, "main.ts"),
      "daemon",
      "--socket",
      place.socket,
      "--state-dir",
      place.stateDir,
    ],
    env,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const daemon: TestDaemon = { ...place, process };
  await ready(daemon);
  return daemon;
}

async function waitFor(path: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await Deno.readTextFile(path)).trim() !== "") return;
    } catch {
      // Not written yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`"${path}" was never written`);
}

sessionTest(
  "a run granted the tree Specter keeps its state in reads no nonce, home, audit log or command log",
  async () => {
    await withHostDir(async (dir) => {
      const home = `${dir}/home`;
      await Deno.mkdir(`${home}/run`, { recursive: true, mode: 0o700 });
      const env = {
        XDG_STATE_HOME: `${home}/state`,
        XDG_DATA_HOME: `${home}/share`,
        XDG_RUNTIME_DIR: `${home}/run`,
      };
      const daemon = await defaultDaemon(home, env);
      try {
        // The victims: a persistent session's home, its saved nonce, the command log; an earlier run.
        await create(daemon, "victim", ["bash"], ["--persist", "--policy", "basic"]);
        const sent = await specter([
          "send",
          "victim",
          ...whereArgs(daemon),
          "echo secret-token-home > ~/.token",
          "--enter",
        ]);
        assert.equal(sent.code, 0, sent.stderr);
        await waitFor(`${home}/state/specter/persist/victim/.token`);
        const earlier = await runCli(
          ["exec", "--policy", "basic", "--", "echo", "secret-token-run"],
          "",
          env,
        );
        assert.equal(earlier.code, 0, earlier.stderr);
        const saved = await Deno.readTextFile(`${home}/state/specter/daemon/sessions/victim/session.json`);
        assert.match(saved, /"mark_nonce":"[0-9a-f]{32}"/, "the victim's nonce is on disk");

        await Deno.writeTextFile(
          `${dir}/read.json`,
          JSON.stringify({ version: 1, exec: ["/usr/bin", "/bin"], fs: { read: [home] } }),
        );
        const attack = await runCli(
          [
            "exec",
            "--policy",
            `${dir}/read.json`,
            "--",
            "sh",
            "-c",
            `grep -rao 'secret-token-[a-z]*' '${home}'; grep -raoh 'mark_nonce.:.[0-9a-f]*' '${home}'; ` +
            `for d in daemon persist runs; do ls -A "${home}/state/specter/$d" | wc -l; done; ls -A '${home}/share/specter' | wc -l; ` +
            `echo scanned`,
          ],
          "",
          env,
        );
        assert.equal(attack.code, 0, attack.stderr);
        const output = String(JSON.parse(attack.stdout).output);
        assert.match(output, /scanned/, output);
        assert.doesNotMatch(output, /secret-token-(home|run)/, output);
        assert.doesNotMatch(output, /mark_nonce.:.[0-9a-f]{32}/, output);
        assert.match(output, /^0\n0\n0\n0\nscanned\n$/, `the state directories show empty: ${output}`);

        // A write grant over one of them: refused before the program starts.
        await Deno.writeTextFile(
          `${dir}/write.json`,
          JSON.stringify({ version: 1, exec: ["/usr/bin", "/bin"], fs: { write: [`${home}/share`] } }),
        );
        const write = await runCli(
          ["exec", "--policy", `${dir}/write.json`, "--ack-unsafe-write", "--", "touch", `${home}/share/ran`],
          "",
          env,
        );
        assert.equal(write.code, 2, write.stderr);
        assert.match(
          write.stderr,
          /E_POLICY_ARTIFACTS_EXPOSED: .*Specter's own state directory/,
          write.stderr,
        );
        await assert.rejects(Deno.lstat(`${home}/share/ran`));
      } finally {
        await cleanUp(daemon);
      }
    });
  },
  90_000,
);
