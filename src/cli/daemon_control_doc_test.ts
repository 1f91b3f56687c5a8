/**
 * Help lists only flags that work: every flag `help new|agent|mcp|verify` prints is given to what the
 * command does with it (a daemon session's options, an agent's base options, verify's session options),
 * and none is refused for being the wrong command's ("is not taken", "names one run", unknown).
 */
import assert from "node:assert/strict";
import { HELP } from "./help.ts";
import { daemonSessionOptions } from "./daemon_control_doc.ts";
import { agentBase } from "./agent.ts";
import { parseCommandLine, sessionOptions } from "./flags.ts";
import { NEW_DOC } from "./sessions.ts";
import { AGENT_DOC } from "./agent.ts";
import { VERIFY_DOC } from "./verify.ts";
import type { CommandDoc } from "./flag_table.ts";

/** The flags a help text lists: `--name` and whether it takes a value. */
function listed(command: string): { name: string; value: boolean }[] {
  const flags: { name: string; value: boolean }[] = [];
  for (const line of HELP[command]!.split("\n")) {
    const match = /^ {2}(?:-\w, )?--([a-z0-9-]+)( [A-Z])?/.exec(line);
    if (match !== null) flags.push({ name: match[1]!, value: match[2] !== undefined });
  }
  return flags;
}

/** A refusal of the flag itself (not of its sample value). */
const REFUSED = /is not taken|names one run|Unknown (option|flag)|has no effect|not (a )?flag of/i;

function tryEach(
  command: string,
  doc: CommandDoc,
  skip: readonly string[],
  use: (flags: Record<string, string | boolean | string[]>) => unknown,
): string[] {
  const tried: string[] = [];
  for (const { name, value } of listed(command)) {
    if (skip.includes(name)) continue;
    // The command line parser takes it (what is listed is in the table the parser uses).
    const args = value ? [`--${name}`, "1", "--", "/bin/true"] : [`--${name}`, "--", "/bin/true"];
    const { values } = parseCommandLine(args, doc);
    const flags: Record<string, string | boolean | string[]> = {};
    for (const [key, v] of Object.entries(values)) {
      if (v !== undefined) flags[key] = v as string | boolean | string[];
    }
    if (name === "record-input") flags.record = "/tmp/never-written.cast";
    try {
      use(flags);
    } catch (error: unknown) {
      // A sample value of "1" may be wrong for the flag (a policy file, a duration): only a refusal of the
      // flag itself fails the test.
      assert.doesNotMatch(String((error as Error).message), REFUSED, `${command} --${name}`);
    }
    tried.push(name);
  }
  return tried;
}

Deno.test("help new lists only flags a daemon session takes (--record yes; --id, --artifacts no)", () => {
  const names = listed("new").map((flag) => flag.name);
  assert.ok(names.includes("record") && names.includes("record-input"));
  for (const gone of ["id", "artifacts"]) assert.ok(!names.includes(gone), gone);
  assert.throws(() => parseCommandLine(["--id", "x", "--", "/bin/true"], NEW_DOC), /Unknown flag "--id"/);
  const tried = tryEach(
    "new",
    NEW_DOC,
    ["socket", "state-dir", "no-autostart", "persist", "help"],
    // As specter new sends them: --cwd is the session's directory, not one of its flags.
    ({ cwd, ...flags }) =>
      daemonSessionOptions({
        name: "n",
        argv: ["/bin/true"],
        cwd: typeof cwd === "string" ? `/tmp/${cwd}` : "/tmp",
        flags,
        persist: false,
        if_exists: "error",
        attach: false,
      }),
  );
  assert.ok(tried.length > 30, `${tried.length} flags tried`);
});

Deno.test("help agent lists no flag that names one run", () => {
  const names = listed("agent").map((flag) => flag.name);
  for (const gone of ["record", "record-input", "id", "artifacts"]) assert.ok(!names.includes(gone), gone);
  for (const gone of ["record", "record-input", "id", "artifacts"]) {
    assert.ok(!listed("mcp").some((flag) => flag.name === gone), `mcp ${gone}`);
  }
  const tried = tryEach("agent", AGENT_DOC, ["help"], (flags) => agentBase(flags));
  assert.ok(tried.length > 30, `${tried.length} flags tried`);
});

Deno.test("help verify lists no flag without an effect", () => {
  assert.doesNotMatch(HELP.verify!, /no effect/);
  assert.ok(!listed("verify").some((flag) => flag.name === "artifacts"));
  tryEach("verify", VERIFY_DOC, ["help"], (flags) => sessionOptions(flags, ["/bin/true"]));
});

Deno.test("a daemon session's recording is a new file, relative to the client's directory", () => {
  const options = daemonSessionOptions({
    name: "n",
    argv: ["/bin/true"],
    cwd: "/work/dir",
    flags: { record: "out/x.cast", "record-input": true },
    persist: false,
    if_exists: "error",
    attach: false,
  });
  assert.deepEqual(options.record, { path: "/work/dir/out/x.cast", input: true, exclusive: true });
  assert.throws(
    () =>
      daemonSessionOptions({
        name: "n",
        argv: ["/bin/true"],
        cwd: "/",
        flags: { id: "x" },
        persist: false,
        if_exists: "error",
        attach: false,
      }),
    /is not taken by a daemon session/,
  );
  assert.throws(
    () =>
      daemonSessionOptions({
        name: "n",
        argv: ["/bin/true"],
        cwd: "/",
        flags: { "record-input": true },
        persist: false,
        if_exists: "error",
        attach: false,
      }),
    /needs --record/,
  );
});
