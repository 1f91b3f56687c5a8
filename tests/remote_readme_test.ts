/**
 * The README's "Watch from a browser" commands run as written (in a fresh HOME, with the default socket and
 * state directory): the daemon listens, `specter url` prints an address whose page loads and whose token
 * opens the WebSocket as a viewer.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { installSpecter, keepDenoDir, ROOT, withTempDir } from "./_helpers.ts";
import { cleanUp } from "./_daemon.ts";

Deno.test({
  name: "README: specter daemon --bind, then specter url gives a working viewer address",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const readme = await Deno.readTextFile(`${ROOT}/README.md`);
    const block = readme.slice(readme.indexOf("## Watch from a browser")).split("```console\n")[1]!.split(
      "```",
    )[0]!;
    const commands = block.trim().split("\n").map((line) => {
      assert.ok(line.startsWith("$ specter "), line);
      return line.slice(2).replace(/\s+#.*$/, "").replace(/\s*&$/, "").split(/\s+/).slice(1);
    });
    assert.equal(commands.length, 2, "two commands");
    assert.equal(commands[0]![0], "daemon");
    assert.equal(commands[1]![0], "url");
    await withTempDir(async (dir) => {
      const env = {
        HOME: dir,
        XDG_RUNTIME_DIR: join(dir, "run"),
        XDG_STATE_HOME: join(dir, "state"),
        XDG_DATA_HOME: join(dir, "data"),
        // As written: `specter` is the command ./scripts/dev install puts on PATH.
        PATH: await installSpecter(join(dir, "bin")),
        ...keepDenoDir({ HOME: dir }),
      };
      Deno.mkdirSync(env.XDG_RUNTIME_DIR, { mode: 0o700 });
      const specter = (args: string[]) => new Deno.Command("specter", { args, env, cwd: dir });
      const daemon = specter(commands[0]!).spawn();
      try {
        let url = "";
        for (let i = 0; i < 200 && url === ""; i++) {
          const out = await specter(commands[1]!).output();
          if (out.code === 0) url = new TextDecoder().decode(out.stdout).trim();
          else await new Promise((resolve) => setTimeout(resolve, 50));
        }
        assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/#token=[A-Za-z0-9_-]{43}$/);
        const page = await fetch(url);
        assert.equal(page.status, 200);
        assert.match(await page.text(), /<title>Specter<\/title>/);
        const token = url.split("#token=")[1]!;
        const ws = new WebSocket(url.replace(/^http/, "ws").replace(/\/#.*$/, "/v1/ws"), [
          "specter.v1",
          `specter.token.${token}`,
        ]);
        const answer = await new Promise<Record<string, unknown>>((resolve, reject) => {
          ws.onerror = () => reject(new Error("refused"));
          ws.onopen = () =>
            ws.send(
              JSON.stringify({ jsonrpc: "2.0", id: 1, method: "daemon.hello", params: { protocol: 1 } }),
            );
          ws.onmessage = (event) => resolve(JSON.parse(String(event.data)));
        });
        assert.equal((answer.result as { scope: string }).scope, "viewer");
        ws.close();
      } finally {
        // The daemon and its keeper (started by it, outliving it by design) go with the test.
        await cleanUp({
          dir,
          socket: join(env.XDG_RUNTIME_DIR, "specter", "daemon.sock"),
          stateDir: join(env.XDG_STATE_HOME, "specter", "daemon"),
          process: daemon,
          log: [],
        });
      }
    });
  },
});
