import assert from "node:assert/strict";
import { parseScenario } from "./load.ts";

const GOOD = `version: 1
name: menu picks the second item
run:
  argv: [/usr/bin/python3, menu.py]
  policy: basic
steps:
  - wait_for: { text: "Pick" }
  - press: down
  - press: [down, up]
  - type: "abc"
  - expect: { screen_contains: "> Banana" }
  - snapshot: after-move
  - press: enter
  - wait_for: { exit: true }
    timeout_ms: 5000
  - expect: { exit_code: 0 }
`;

Deno.test("a scenario parses with the source line of every step", () => {
  const loaded = parseScenario(GOOD, "/s/menu.yaml");
  assert.equal(loaded.scenario.steps.length, 9);
  assert.deepEqual(loaded.stepLines, [7, 8, 9, 10, 11, 12, 13, 14, 16]);
  assert.equal(loaded.dir, "/s");
});

Deno.test("JSON scenarios parse too", () => {
  const loaded = parseScenario(
    JSON.stringify({ version: 1, name: "x", run: { argv: ["true"] }, steps: [{ press: "enter" }] }),
  );
  assert.equal(loaded.scenario.name, "x");
});

const BAD: readonly [string, string, RegExp][] = [
  [
    "version: 1\nname: x\nrun: {argv: [a]}\nsteps: [ {press: enter} ]\nextra: 1\n",
    "E_SCENARIO_SCHEMA",
    /extra|Unrecognized/,
  ],
  [
    "version: 2\nname: x\nrun: {argv: [a]}\nsteps: [ {press: enter} ]\n",
    "E_SCENARIO_SCHEMA",
    /field "version"/,
  ],
  [
    "version: 1\nname: x\nrun: {argv: [a]}\nsteps: [ {press: enter, type: x} ]\n",
    "E_SCENARIO_SCHEMA",
    /steps/,
  ],
  [
    "version: 1\nname: x\nrun: {argv: [a]}\nsteps: [ {wait_for: {text: a}, timeout_ms: -1} ]\n",
    "E_SCENARIO_SCHEMA",
    /steps/,
  ],
  ["version: 1\nname: x\nrun: {argv: []}\nsteps: [ {press: enter} ]\n", "E_SCENARIO_SCHEMA", /run\.argv/],
  [
    "version: 1\nname: x\nrun: {argv: [a], cwd: ., workspace: {}}\nsteps: [ {press: enter} ]\n",
    "E_SCENARIO_SCHEMA",
    /run\.workspace/,
  ],
  [
    "version: 1\nname: x\nrun: {argv: [a], workspace: {files: {'../escape': x}}}\nsteps: [ {press: enter} ]\n",
    "E_SCENARIO_SCHEMA",
    /run\.workspace\.files/,
  ],
  [
    "version: 1\nname: x\nrun: {argv: [a], workspace: {files: {'/abs': x}}}\nsteps: [ {press: enter} ]\n",
    "E_SCENARIO_SCHEMA",
    /run\.workspace\.files/,
  ],
  [
    "version: 1\nname: x\nrun: {argv: [a]}\nsteps: [ {expect: {file: a, equals: b, contains: c}} ]\n",
    "E_SCENARIO_SCHEMA",
    /steps/,
  ],
  ["version: 1\nname: [unclosed\n", "E_SCENARIO_PARSE", /not valid YAML/],
  ["version: 1\nversion: 1\n", "E_SCENARIO_PARSE", /not valid YAML/],
];

for (const [text, code, message] of BAD) {
  Deno.test(`bad scenario ${JSON.stringify(text.slice(0, 40))} fails with ${code}`, () => {
    assert.throws(() => parseScenario(text), (e: unknown) => {
      const error = e as { code: string; message: string };
      return error.code === code && message.test(error.message);
    });
  });
}

Deno.test("expect {file} takes only relative paths inside the working directory", () => {
  for (const file of ["/etc/passwd", "../x", "a/../../b", "./a"]) {
    const text =
      `version: 1\nname: x\nrun: {argv: [a]}\nsteps: [ {expect: {file: "${file}", contains: c}} ]\n`;
    assert.throws(
      () => parseScenario(text),
      (e: unknown) => (e as { code: string }).code === "E_SCENARIO_SCHEMA",
    );
  }
});
