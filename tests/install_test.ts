/**
 * `./scripts/dev install` puts a `specter` command on PATH (a launcher for this checkout), and the clients
 * find it there, or in `~/.local/bin` when that is not on PATH yet: run as a new user would, in a fresh home.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT, withTempDir } from "./_helpers.ts";

const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

async function run(
  argv: string[],
  env: Record<string, string>,
  cwd = "/",
): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(argv[0]!, { args: argv.slice(1), env, clearEnv: true, cwd }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

/** A new user's environment: a home of its own, the system PATH, this machine's Deno cache. */
function userEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  const denoDir = Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME") ?? "/root", ".cache", "deno");
  return { HOME: home, PATH: SYSTEM_PATH, DENO_DIR: denoDir, NO_COLOR: "1", ...extra };
}

Deno.test("scripts/dev install writes a launcher that runs this checkout from anywhere", async () => {
  await withTempDir(async (home) => {
    const installed = await run([`${ROOT}/scripts/dev`, "install"], userEnv(home));
    assert.equal(installed.code, 0, installed.stderr);
    const launcher = join(home, ".local", "bin", "specter");
    assert.match(installed.stderr, new RegExp(`installed the specter command: ${launcher}`));
    // ~/.local/bin is not on this PATH: the hint says what to add.
    assert.match(installed.stderr, /is not on your PATH; add it: export PATH=/);
    assert.equal((await Deno.stat(launcher)).mode! & 0o777, 0o755);

    const env = userEnv(home, { PATH: `${join(home, ".local", "bin")}:${SYSTEM_PATH}` });
    const version = await run(["specter", "--version"], env, home);
    assert.equal(version.code, 0, version.stderr);
    assert.match(version.stdout, /^specter \d+\.\d+\.\d+/);
    // A real run through the launcher, from another directory, in the default sandbox.
    const exec = await run(["specter", "exec", "--", "/usr/bin/echo", "from-launcher"], env, "/tmp");
    assert.equal(exec.code, 0, exec.stderr);
    assert.match(exec.stdout, /from-launcher/);

    // Installing again replaces its own launcher, quietly about PATH when it is on it.
    const again = await run([`${ROOT}/scripts/dev`, "install"], env);
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /not on your PATH/);
  });
});

Deno.test("scripts/dev install leaves a specter it did not write alone, unless --force", async () => {
  await withTempDir(async (home) => {
    const dir = join(home, "bin");
    await Deno.mkdir(dir);
    await Deno.writeTextFile(join(dir, "specter"), "#!/bin/sh\necho mine\n", { mode: 0o755 });
    const env = userEnv(home, { SPECTER_BIN_DIR: dir });
    const refused = await run([`${ROOT}/scripts/dev`, "install"], env);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /was not written by scripts\/dev install; left alone \(--force replaces it\)/,
    );
    assert.equal(await Deno.readTextFile(join(dir, "specter")), "#!/bin/sh\necho mine\n");
    const forced = await run([`${ROOT}/scripts/dev`, "install", "--force"], env);
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(
      await Deno.readTextFile(join(dir, "specter")),
      /specter launcher, written by scripts\/dev install/,
    );
  });
});

Deno.test("the Python client finds the installed specter in ~/.local/bin when it is not on PATH", async () => {
  await withTempDir(async (home) => {
    assert.equal((await run([`${ROOT}/scripts/dev`, "install"], userEnv(home))).code, 0);
    const script = [
      "import asyncio, sys",
      `sys.path.insert(0, ${JSON.stringify(join(ROOT, "clients", "python"))})`,
      "from specter import Client",
      "async def main():",
      "    async with Client() as client:",
      "        result = await client.exec_command('echo found-it')",
      "        print(client._argv[0], result.output.strip())",
      "asyncio.run(main())",
    ].join("\n");
    // No SPECTER_COMMAND and no specter on PATH: the client must find ~/.local/bin/specter itself.
    const result = await run(["/usr/bin/python3", "-c", script], userEnv(home), home);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`${join(home, ".local", "bin", "specter")} .*found-it`));
  });
});
