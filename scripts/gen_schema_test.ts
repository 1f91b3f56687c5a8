import assert from "node:assert/strict";
import { render, SCHEMAS } from "./gen_schema.ts";

for (const name of Object.keys(SCHEMAS) as (keyof typeof SCHEMAS)[]) {
  Deno.test(`spec/schema/${name} is generated from the zod schema (not stale)`, async () => {
    const committed = await Deno.readTextFile(new URL(`../spec/schema/${name}`, import.meta.url));
    assert.equal(committed, render(name), "run `deno task schema`");
  });
}
