import assert from "node:assert/strict";
import { commandFlags } from "../src/cli/flag_table.ts";
import { COMMAND_DOCS } from "../src/cli/help.ts";
import { commandSection, inline, prose, renderCliDocs } from "./gen_cli_docs.ts";

Deno.test("docs/cli.md has a section per command and a row per flag it accepts", () => {
  const page = renderCliDocs();
  for (const doc of COMMAND_DOCS) {
    assert.ok(page.includes(`## \`specter ${doc.name}\``), doc.name);
    const section = commandSection(doc);
    for (const name of Object.keys(commandFlags(doc))) {
      assert.match(section, new RegExp(`^\\| (\`-\\w\`, )?\`--${name}\` \\|`, "m"), `${doc.name} --${name}`);
    }
  }
});

Deno.test("inline escapes markup and links the repository's files", () => {
  assert.equal(inline("a|b <x> E_PATH_* _TAMPERED fs.write"), "a\\|b \\<x> E_PATH_\\* \\_TAMPERED fs.write");
  assert.equal(inline("see spec/policy.md."), "see [spec/policy.md](../spec/policy.md).");
});

Deno.test("prose: indented lines become a fenced block, the rest paragraphs", () => {
  assert.equal(
    prose("Prints:\n  {a, b}\n- then exits"),
    "Prints:\n\n```text\n{a, b}\n```\n\n\\- then exits",
  );
});
