import assert from "node:assert/strict";
import { PolicyError } from "../errors.ts";
import { formatOfPath, parsePolicyText } from "./parse.ts";

Deno.test("JSON and TOML parse to the same document", () => {
  const json = parsePolicyText(
    '{"version":1,"exec":["/usr/bin"],"fs":{"read":["${workspace}"]},"network":"off","budgets":{"wall_ms":5000}}',
    "json",
    "file:/p.json",
  );
  const toml = parsePolicyText(
    'version = 1\nexec = ["/usr/bin"]\nnetwork = "off"\n\n[fs]\nread = ["${workspace}"]\n\n[budgets]\nwall_ms = 5000\n',
    "toml",
    "file:/p.toml",
  );
  // smol-toml builds tables without a prototype; compare the data only.
  assert.deepEqual(JSON.parse(JSON.stringify(toml)), json);
});

Deno.test("a leading byte order mark is ignored", () => {
  assert.deepEqual(parsePolicyText('\uFEFF{"version":1}', "json", "file:/p.json"), { version: 1 });
  assert.deepEqual(JSON.parse(JSON.stringify(parsePolicyText("\uFEFFversion = 1", "toml", "file:/p.toml"))), {
    version: 1,
  });
});

function parseFails(text: string, format: "json" | "toml", message: RegExp): void {
  assert.throws(() => parsePolicyText(text, format, "file:/x/p"), (e: unknown) => {
    assert.ok(e instanceof PolicyError);
    assert.equal(e.code, "E_POLICY_PARSE");
    assert.equal(e.problems.length, 1);
    assert.equal(e.problems[0]?.field, "(policy)");
    assert.match(e.message, message);
    assert.doesNotMatch(e.message, /\n/);
    return true;
  });
}

Deno.test("bad JSON fails with E_POLICY_PARSE naming the source", () => {
  parseFails("{ version: 1 }", "json", /^The policy "file:\/x\/p" is not valid JSON: /);
});

Deno.test("bad TOML fails with E_POLICY_PARSE, one line, with line and column", () => {
  parseFails(
    "version = 1\nexec = [\n",
    "toml",
    /^The policy "file:\/x\/p" is not valid TOML: .*\(line \d+, column \d+\)$/,
  );
  parseFails("version = 1\nversion = 1\n", "toml", /not valid TOML/);
  parseFails("big = 9007199254740993\n", "toml", /not valid TOML/);
});

Deno.test("formatOfPath goes by extension, without case", () => {
  assert.equal(formatOfPath("/a/p.json"), "json");
  assert.equal(formatOfPath("/a/p.TOML"), "toml");
  assert.equal(formatOfPath("/a/p.yaml"), null);
  assert.equal(formatOfPath("/a/json"), null);
});
