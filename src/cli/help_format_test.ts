import assert from "node:assert/strict";
import type { CommandDoc } from "./flag_table.ts";
import { DESCRIPTION_COLUMN, formatHelp, HELP_WIDTH, wrap } from "./help_format.ts";

Deno.test("wrap breaks at spaces within the width and keeps an overlong word whole", () => {
  assert.deepEqual(wrap("aa bb cc", 5), ["aa bb", "cc"]);
  assert.deepEqual(wrap("  aa   bb ", 80), ["aa bb"]);
  assert.deepEqual(wrap("a verylongword b", 4), ["a", "verylongword", "b"]);
  assert.deepEqual(wrap("", 10), []);
});

const DOC: CommandDoc = {
  name: "demo",
  usage: ["specter demo FILE", "specter demo other"],
  about: "Does things.\n  an example",
  groups: [{
    title: "Demo flags",
    flags: {
      json: { type: "boolean", short: "j", description: "Print JSON" },
      "a-rather-long-flag-name": { type: "string", value: "VALUE", description: "Long" },
      note: { type: "string", value: "N", description: "word ".repeat(40).trim() },
    },
    note: "Units: none.",
  }],
};

Deno.test("formatHelp: usage, prose as written, a flag column and wrapped descriptions", () => {
  const text = formatHelp(DOC);
  const lines = text.split("\n");
  assert.deepEqual(lines.slice(0, 6), [
    "Usage: specter demo FILE",
    "       specter demo other",
    "",
    "Does things.",
    "  an example",
    "",
  ]);
  assert.equal(lines[6], "Demo flags:");
  assert.equal(lines[7], "  -j, --json".padEnd(DESCRIPTION_COLUMN) + "Print JSON");
  // Too wide for the column: the description goes below, at the column.
  assert.equal(lines[8], "  --a-rather-long-flag-name VALUE");
  assert.equal(lines[9], " ".repeat(DESCRIPTION_COLUMN) + "Long");
  assert.ok(lines[10]!.startsWith("  --note N".padEnd(DESCRIPTION_COLUMN) + "word"));
  assert.ok(lines[11]!.startsWith(" ".repeat(DESCRIPTION_COLUMN) + "word"));
  assert.equal(lines.at(-1), "Units: none.");
  for (const line of lines) assert.ok(line.length <= HELP_WIDTH, line);
});
