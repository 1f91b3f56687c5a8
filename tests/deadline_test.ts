/**
 * tests/_deadline.ts (preloaded by the test task): a hung test fails, named, and the suite goes on; a test
 * that ends is untouched. Every form of `Deno.test` the suite may use is covered.
 */
import assert from "node:assert/strict";
import { DENO, ROOT, withTempDir } from "./_helpers.ts";

Deno.test("test deadline: a hung test fails by name in every form of Deno.test; the others pass", async () => {
  await withTempDir(async (dir) => {
    const file = `${dir}/forms_test.ts`;
    await Deno.writeTextFile(
      file,
      [
        `const hang = () => new Promise<void>(() => {});`,
        `const child = () => new Deno.Command("sleep", { args: ["60"] }).spawn().status.then(() => {});`,
        `const quiet = { sanitizeOps: false, sanitizeResources: false };`,
        `Deno.test("name and fn: hangs", hang);`,
        `Deno.test("name and fn: ends", () => {});`,
        `Deno.test("name, options and fn: hangs", quiet, child);`,
        `Deno.test({ name: "definition: hangs", ...quiet, fn: child });`,
        `Deno.test({ name: "definition: ends", fn: async (t) => { await t.step("a step", () => {}); } });`,
        `Deno.test({ name: "options and fn: hangs" }, hang);`,
        `Deno.test(function namedFunctionHangs() { return hang(); });`,
        `Deno.test.ignore("ignored", hang);`,
      ].join("\n"),
    );
    const started = Date.now();
    const { code, stdout, stderr } = await new Deno.Command(DENO, {
      args: ["test", "-A", "--no-check", "--preload", `${ROOT}/tests/_deadline.ts`, file],
      env: { SPECTER_TEST_DEADLINE_MS: "1000", NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
    assert.equal(code, 1, out);
    for (const hung of ["name and fn", "name, options and fn", "definition", "options and fn"]) {
      assert.match(out, new RegExp(`${hung}: hangs \\.\\.\\. FAILED`), out);
      assert.match(out, new RegExp(`Test "${hung}: hangs" did not end within 1 s: it hangs`), out);
    }
    assert.match(out, /namedFunctionHangs \.\.\. FAILED/, out);
    assert.match(out, /name and fn: ends \.\.\. ok/, out);
    assert.match(out, /definition: ends \.\.\. ok/, out);
    assert.match(out, /ignored \.\.\. ignored/, out);
    assert.match(out, /2 passed \(1 step\) \| 5 failed \| 1 ignored/, out);
    // Five 1 s deadlines, one after another, and Deno's start: not the 60 s the children would take.
    assert.ok(Date.now() - started < 40_000, `took ${Date.now() - started} ms`);
  });
});
