/**
 * The keeper loads only what it needs: its entry (`src/cli/keeper.ts`, where `main.ts` sends `specter
 * keeper`) evaluates no zod and none of the protocol's schemas (they were ~20 MiB of its memory). zod marks
 * the global object when it is evaluated (`__zod_globalConfig`); the control shows that the probe sees it.
 */
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import { ROOT } from "./_helpers.ts";

/** The names of the global object's own properties that mention zod, after importing `entry` in a fresh Deno. */
async function zodGlobalsAfter(entry: string): Promise<string[]> {
  const script = `await import(${JSON.stringify(pathToFileURL(`${ROOT}/${entry}`).href)});\n` +
    "console.log(JSON.stringify(Object.getOwnPropertyNames(globalThis).filter((n) => /zod/i.test(n))));";
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", script],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 0, stderr);
  return JSON.parse(new TextDecoder().decode(output.stdout).trim());
}

Deno.test("the keeper's entry evaluates no zod (the daemon's does: the probe works)", async () => {
  assert.deepEqual(await zodGlobalsAfter("src/cli/keeper.ts"), []);
  assert.ok((await zodGlobalsAfter("src/daemon/mod.ts")).length > 0, "the probe no longer sees zod");
});
