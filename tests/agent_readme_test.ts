/** The README's "Use it from an agent" exchange runs as written and answers what the README shows. */
import assert from "node:assert/strict";
import { installSpecter, ROOT, withTempDir } from "./_helpers.ts";

Deno.test({
  name: "README: the specter agent example gives the response shown",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const readme = await Deno.readTextFile(`${ROOT}/README.md`);
    const at = readme.indexOf("## Use it from an agent");
    const [command, response] = readme.slice(at).split("```console\n")[1]!.split("\n");
    assert.ok(command!.startsWith("$ echo '"), command);
    // As written: `specter` is the command ./scripts/dev install puts on PATH.
    const { code, stdout, stderr } = await withTempDir(async (bin) => {
      const run = new Deno.Command("bash", {
        args: ["-c", command!.slice(2)],
        cwd: ROOT,
        env: { PATH: await installSpecter(bin) },
        stdout: "piped",
        stderr: "piped",
      });
      return await run.output();
    });
    assert.equal(code, 0, new TextDecoder().decode(stderr));
    const strip = (line: string) => {
      const value = JSON.parse(line);
      assert.ok(value.result !== undefined, `no result in ${line}\n${new TextDecoder().decode(stderr)}`);
      // Timing, and how output was batched into frames, differ from run to run.
      delete value.result.wall_time_ms;
      delete value.result.to_seq;
      return value;
    };
    assert.deepEqual(strip(new TextDecoder().decode(stdout).trim()), strip(response!));
  },
});
