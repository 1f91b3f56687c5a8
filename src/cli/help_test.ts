import assert from "node:assert/strict";
import { commandFlags, commandOptions, flagLabel } from "./flag_table.ts";
import { COMMAND_DOCS, HELP } from "./help.ts";

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

Deno.test("every flag a command accepts is described in its help", () => {
  for (const doc of COMMAND_DOCS) {
    const help = HELP[doc.name];
    assert.ok(help !== undefined, `no help for ${doc.name}`);
    // The command parses with exactly these options: what it accepts is what its doc lists.
    const accepted = Object.keys(commandOptions(doc));
    assert.ok(accepted.includes("help"), `specter ${doc.name} does not accept --help`);
    const flags = commandFlags(doc);
    for (const name of accepted) {
      const flag = flags[name]!;
      assert.ok(flag.description.trim() !== "", `specter ${doc.name} --${name} has no description`);
      if (flag.type === "string") assert.ok(flag.value.trim() !== "", `--${name} has no value placeholder`);
      if (flag.type === "string" && flag.multiple === true) {
        assert.match(flag.description, /repeatable/, `--${name} may repeat: its description says so`);
      }
      const row = new RegExp(`^  ${RegExp.escape(flagLabel(name, flag))}(  |\\n)`, "m");
      assert.match(help, row, `specter help ${doc.name} does not list --${name}`);
    }
  }
});

Deno.test("every command in the overview has help, and only those", () => {
  const overview = HELP.specter!;
  const listed = new Set([...overview.matchAll(/^ {2}specter ([a-z]+)/gm)].map((m) => m[1]!));
  listed.delete("help");
  assert.deepEqual([...listed].sort(), COMMAND_DOCS.map((doc) => doc.name).sort());
  assert.deepEqual(Object.keys(HELP).sort(), ["specter", ...listed].sort());
});

Deno.test("help for test and verify describes their own flags", () => {
  assert.match(HELP.test!, /^Usage: specter test SCENARIO…/);
  assert.match(HELP.test!, /^ {2}--update-goldens {2}/m);
  assert.match(HELP.verify!, /^Usage: specter verify GOLDEN \[flags\] -- CMD ARGS…/);
  assert.match(HELP.verify!, /^ {2}--what WHAT {2}/m);
  // verify takes the session flags, as run does.
  assert.match(HELP.verify!, /^Session flags:/m);
});

Deno.test("the dispatcher's command names are the documented commands", async () => {
  const { COMMAND_NAMES } = await import("./cli.ts");
  assert.deepEqual([...COMMAND_NAMES], COMMAND_DOCS.map((doc) => doc.name));
});
