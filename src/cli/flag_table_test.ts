import assert from "node:assert/strict";
import { type CommandDoc, commandFlags, commandOptions, flagLabel, parseOptions } from "./flag_table.ts";

Deno.test("parseOptions keeps type, short and multiple, and drops the documentation", () => {
  const options = parseOptions({
    json: { type: "boolean", short: "j", description: "JSON" },
    env: { type: "string", value: "NAME=VALUE", multiple: true, description: "repeatable" },
    cwd: { type: "string", value: "DIR", description: "Where" },
  });
  assert.deepEqual(options, {
    json: { type: "boolean", short: "j" },
    env: { type: "string", multiple: true },
    cwd: { type: "string" },
  });
});

Deno.test("commandOptions merges the groups; a flag in two groups is refused", () => {
  const doc: CommandDoc = {
    name: "demo",
    usage: [],
    about: "",
    groups: [
      { title: "A", flags: { a: { type: "boolean", description: "a" } } },
      { title: "B", flags: { b: { type: "string", value: "B", description: "b" } } },
    ],
  };
  assert.deepEqual(commandOptions(doc), { a: { type: "boolean" }, b: { type: "string" } });
  const twice: CommandDoc = { ...doc, groups: [doc.groups[0]!, doc.groups[0]!] };
  assert.throws(() => commandFlags(twice), /"--a" is in two groups/);
});

Deno.test("flagLabel: short alias first, value placeholder after", () => {
  assert.equal(flagLabel("help", { type: "boolean", short: "h", description: "" }), "-h, --help");
  assert.equal(flagLabel("timeout", { type: "string", value: "DUR", description: "" }), "--timeout DUR");
});
