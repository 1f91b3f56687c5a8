import assert from "node:assert/strict";
import { HELP } from "./help.ts";

Deno.test("every file the help text names exists", async () => {
  const root = new URL("../../", import.meta.url);
  const named = new Set<string>();
  for (const text of Object.values(HELP)) {
    for (const match of text.matchAll(/\b(?:spec|docs|fixtures|profiles)\/[\w./-]+\.\w+/g)) {
      named.add(match[0]);
    }
  }
  assert.ok(named.size >= 3, [...named].join(", "));
  for (const path of named) {
    const stat = await Deno.stat(new URL(path, root)).catch(() => null);
    assert.ok(stat?.isFile, `help names "${path}", which does not exist`);
  }
});
