import assert from "node:assert/strict";
import { exitCodeForError } from "./exit_codes.ts";
import { runAsMain } from "./standalone.ts";

Deno.test("runAsMain: the command's name first, then its arguments; another first argument is E_USAGE", async () => {
  const seen: (readonly string[])[] = [];
  const command = (rest: readonly string[]) => {
    seen.push(rest);
    return Promise.resolve(7);
  };
  assert.equal(await runAsMain("keeper", ["keeper", "--state-dir", "/x"], command), 7);
  assert.deepEqual(seen, [["--state-dir", "/x"]]);
  for (const args of [[], ["daemon", "--state-dir", "/x"], ["--state-dir", "/x"]]) {
    assert.equal(await runAsMain("keeper", args, command), exitCodeForError("E_USAGE"));
  }
  assert.equal(seen.length, 1, "the command did not run");
});
