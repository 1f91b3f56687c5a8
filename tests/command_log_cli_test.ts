/**
 * The command log is always on: `specter exec`, `specter run` and `specter agent` add a row per program
 * (or per marked shell command) to `$XDG_DATA_HOME/specter/log.sqlite`, as the daemon's sessions do, and
 * `specter history` lists them with who ran them.
 */
import assert from "node:assert/strict";
import { CliProcess, runCli, withTempDir } from "./_helpers.ts";

const sanitize = { sanitizeOps: false, sanitizeResources: false };
const NO_SANDBOX = ["--unsafe-no-sandbox", "--ack-no-network-enforcement"];

async function history(
  env: Record<string, string>,
  extra: string[] = [],
): Promise<Record<string, unknown>[]> {
  const result = await runCli(["history", "--json", ...extra], "", env);
  assert.equal(result.code, 0, result.stderr);
  return result.stdout.trim().split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
}

Deno.test({
  name: "command log: exec and run each add the program as a row (human), with its exit code and output",
  ...sanitize,
  fn: () =>
    withTempDir(async (dir) => {
      const env = { XDG_DATA_HOME: dir };
      const exec = await runCli(
        ["exec", "--policy", "basic", "--", "bash", "-c", "echo from-exec; exit 3"],
        "",
        env,
      );
      assert.equal(exec.code, 3, exec.stderr);
      const run = await runCli(["run", ...NO_SANDBOX, "--", "sh", "-c", "echo from-run"], "", env);
      assert.equal(run.code, 0, run.stderr);
      const rows = await history(env);
      assert.equal(rows.length, 2);
      const byCommand = new Map(rows.map((row) => [row.command, row]));
      const fromExec = byCommand.get("echo from-exec; exit 3")!;
      assert.equal(fromExec.exit_code, 3);
      assert.equal(fromExec.output, "from-exec\n");
      assert.equal(fromExec.author_kind, "human");
      assert.equal(fromExec.source, "exec");
      assert.match(String(fromExec.policy_hash), /^[0-9a-f]{64}$/);
      assert.equal(byCommand.get("echo from-run")!.exit_code, 0);
      assert.equal((await history(env, ["--failed"])).length, 1);
    }),
});

Deno.test({
  name: "command log: an agent's exec_command calls are rows with author_kind agent",
  ...sanitize,
  fn: () =>
    withTempDir(async (dir) => {
      const env = { XDG_DATA_HOME: dir };
      const cli = new CliProcess(["agent", ...NO_SANDBOX], env);
      await cli.send(
        '{"jsonrpc":"2.0","id":1,"method":"exec_command","params":{"cmd":"echo agent-was-here; exit 4"}}',
      );
      await cli.waitForStdout("agent-was-here");
      await cli.closeStdin();
      assert.equal((await cli.result()).code, 0);
      const [row] = await history(env);
      assert.equal(row?.command, "echo agent-was-here; exit 4");
      assert.equal(row?.exit_code, 4);
      assert.equal(row?.author_kind, "agent");
    }),
});
