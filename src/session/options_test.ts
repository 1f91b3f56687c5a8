import assert from "node:assert/strict";
import { resolveOptions } from "./options.ts";
import { UsageError } from "../errors.ts";

Deno.test("resolveOptions: a cwd with a trailing slash is taken; one with .. or // inside is not", () => {
  assert.equal(resolveOptions({ argv: ["true"], cwd: "/tmp/" }).cwd, "/tmp/");
  for (const cwd of ["/tmp/../etc", "/tmp//x", "/tmp/./x", "tmp"]) {
    assert.throws(() => resolveOptions({ argv: ["true"], cwd }), UsageError, cwd);
  }
});
