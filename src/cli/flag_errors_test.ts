import assert from "node:assert/strict";
import { SpecterError } from "../errors.ts";
import { parseFlags } from "./flags.ts";

const OPTIONS = {
  timeout: { type: "string" },
  json: { type: "boolean" },
  policy: { type: "string", short: "p" },
} as const;

function messageOf(args: string[]): string {
  try {
    parseFlags(args, OPTIONS);
  } catch (error: unknown) {
    assert.ok(error instanceof SpecterError);
    assert.equal(error.code, "E_USAGE");
    return error.message;
  }
  throw new Error(`${args.join(" ")} parsed`);
}

Deno.test("parseArgs' complaints read as a person can act on them", () => {
  assert.equal(messageOf(["--timout", "5s"]), 'Unknown flag "--timout"; did you mean "--timeout"?');
  assert.equal(messageOf(["--jsn"]), 'Unknown flag "--jsn"; did you mean "--json"?');
  assert.equal(messageOf(["--zzzzzzzz"]), 'Unknown flag "--zzzzzzzz"');
  assert.equal(messageOf(["-x"]), 'Unknown flag "-x"');
  assert.equal(
    messageOf(["--timeout"]),
    'Flag "--timeout" needs a value (a value that begins with "-" is written --timeout=-VALUE)',
  );
  assert.match(messageOf(["--timeout", "--json"]), /^Flag "--timeout" needs a value/);
  assert.equal(messageOf(["--json=yes"]), 'Flag "--json" takes no value');
  // No message keeps parseArgs' unclosed quote.
  for (const args of [["--timout"], ["-x"], ["--timeout"]]) assert.doesNotMatch(messageOf(args), /'/);
});
