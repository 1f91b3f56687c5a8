import assert from "node:assert/strict";
import { LEAN_V8_FLAGS } from "../../src/cli/self_command.ts";
import { floorRssKib } from "./_floors.ts";

Deno.test("each floor of bench:daemon runs, and each costs more than the one it builds on", async () => {
  // Same flags for all three, so that only what each loads differs (the benchmark gives the keeper's lite mode).
  const bare = await floorRssKib("bare", LEAN_V8_FLAGS, 800);
  const terminal = await floorRssKib("terminal", LEAN_V8_FLAGS, 800);
  const validating = await floorRssKib("validating", LEAN_V8_FLAGS, 800);
  assert.ok(bare > 10 * 1024, `a bare Deno process of ${bare} KiB`);
  // The libc binding and zod are each several MiB (docs/benchmarks.md); 1 MiB is far from either.
  assert.ok(terminal > bare + 1024, `terminal ${terminal} KiB, bare ${bare} KiB`);
  assert.ok(validating > terminal + 1024, `validating ${validating} KiB, terminal ${terminal} KiB`);
});
