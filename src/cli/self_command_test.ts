import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { KEEPER_V8_FLAGS, LEAN_V8_FLAGS, selfProgram, v8FlagsOf } from "./self_command.ts";

Deno.test("under deno run, the keeper, the daemon and the network relay start from their own modules", () => {
  for (
    const [command, file] of [["keeper", "keeper"], ["daemon", "daemon"], ["net-relay", "net_relay"]] as const
  ) {
    const entry = fileURLToPath(new URL(`./${file}.ts`, import.meta.url));
    assert.deepEqual(selfProgram(command), [Deno.execPath(), "run", "-A", entry]);
    assert.ok(Deno.statSync(entry).isFile, entry);
  }
});

Deno.test("V8 flags: the keeper's own, the daemon's lean ones, and the user's DENO_V8_FLAGS over both", () => {
  // The inherited value is passed, not set with Deno.env: other test modules run in this process.
  for (const inherited of [undefined, LEAN_V8_FLAGS]) {
    assert.equal(v8FlagsOf("keeper", inherited), KEEPER_V8_FLAGS);
    assert.equal(v8FlagsOf("daemon", inherited), LEAN_V8_FLAGS);
    assert.equal(v8FlagsOf("net-relay", inherited), LEAN_V8_FLAGS);
  }
  assert.ok(KEEPER_V8_FLAGS.startsWith(`${LEAN_V8_FLAGS},`) && KEEPER_V8_FLAGS.endsWith(",--lite-mode"));
  assert.equal(v8FlagsOf("keeper", "--max-old-space-size=64"), "--max-old-space-size=64");
  assert.equal(v8FlagsOf("daemon", "--max-old-space-size=64"), "--max-old-space-size=64");
  assert.equal(
    v8FlagsOf("daemon", Deno.env.get("DENO_V8_FLAGS")),
    v8FlagsOf("daemon"),
    "the default reads the environment",
  );
});
