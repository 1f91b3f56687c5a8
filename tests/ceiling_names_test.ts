/**
 * One name per ceiling: the table in spec/policy.md ("budgets") names each ceiling's policy key, command-line
 * flag, scenario key, library option and breach report. This test reads that table and checks every cell
 * against the code, so the docs and the code cannot drift apart.
 */
import assert from "node:assert/strict";
import { BUDGET_KEYS } from "../src/policy/mod.ts";
import { SESSION_FLAGS } from "../src/cli/session_flags.ts";
import { RunConfigSchema } from "../src/scenario/mod.ts";
import { resolveOptions } from "../src/session/mod.ts";
import { CAPSULE_KILL_REASONS } from "../src/protocol/mod.ts";

interface Row {
  readonly ceiling: string;
  readonly key: string;
  readonly flag: string;
  readonly scenario: string;
  readonly library: string;
  readonly breach: string;
}

async function table(): Promise<Row[]> {
  const text = await Deno.readTextFile(new URL("../spec/policy.md", import.meta.url));
  const rows: Row[] = [];
  for (const line of text.split("\n")) {
    const cells = line.trim().split("|").slice(1, -1).map((cell) => cell.trim());
    if (cells.length !== 6 || !cells[1]!.startsWith("`budgets.")) continue;
    const code = (cell: string) => /`([^`]*)`/.exec(cell)?.[1] ?? "";
    rows.push({
      ceiling: cells[0]!,
      key: code(cells[1]!).slice("budgets.".length),
      flag: code(cells[2]!),
      scenario: code(cells[3]!),
      library: code(cells[4]!),
      breach: cells[5]!,
    });
  }
  return rows;
}

Deno.test("spec/policy.md names every budget once, with a flag, and a library option that takes effect", async () => {
  const rows = await table();
  assert.deepEqual(rows.map((row) => row.key).sort(), [...BUDGET_KEYS].sort());
  const scenarioKeys = Object.keys(RunConfigSchema.shape);
  for (const row of rows) {
    const flag = row.flag.split(" ")[0]!.replace(/^--/, "");
    assert.ok(flag in SESSION_FLAGS, `${row.ceiling}: "--${flag}" is not a run/exec flag`);
    if (row.scenario !== "") {
      assert.ok(
        scenarioKeys.includes(row.scenario),
        `${row.ceiling}: "${row.scenario}" is not a scenario key`,
      );
    }
    // The library option, set through its path, comes out resolved under the same path.
    const path = row.library.split(".");
    const options: Record<string, unknown> = { argv: ["/bin/true"] };
    if (path.length === 2) options[path[0]!] = { [path[1]!]: 7 };
    else options[path[0]!] = 7;
    const resolved = resolveOptions(options as unknown as Parameters<typeof resolveOptions>[0]);
    const value = path.reduce<unknown>((at, part) => (at as Record<string, unknown>)[part], resolved);
    assert.equal(value, 7, `${row.ceiling}: SpawnOptions.${row.library}`);
    const reason = /`capsule_kill` `(\w+)`/.exec(row.breach)?.[1];
    if (reason !== undefined) {
      assert.ok(
        (CAPSULE_KILL_REASONS as readonly string[]).includes(reason),
        `${row.ceiling}: "${reason}" is not a capsule_kill reason`,
      );
    }
  }
  // Every capsule_kill reason is some ceiling's breach.
  for (const reason of CAPSULE_KILL_REASONS) {
    assert.ok(rows.some((row) => row.breach.includes(`\`capsule_kill\` \`${reason}\``)), reason);
  }
});
