import assert from "node:assert/strict";
import { loadScenario, MAX_SCENARIO_FILE_BYTES, parseScenario } from "./load.ts";

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

Deno.test("the longest durations a timer can wait are taken", () => {
  const text = "version: 1\nname: x\nrun: {argv: [a], timeout_ms: 2147483647}\n" +
    "steps: [ {wait_for: {idle: 2147483647}}, {terminate: {grace_ms: 2147483647}} ]\n";
  const { scenario } = parseScenario(text, "/s/s.yaml");
  assert.equal(scenario.run.timeout_ms, 2 ** 31 - 1);
  assert.deepEqual(scenario.steps[1], { terminate: { grace_ms: 2 ** 31 - 1 } });
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
  // Durations a timer cannot wait (a longer one would fire at once): refused, naming the field.
  [
    "version: 1\nname: x\nrun: {argv: [a], timeout_ms: 2147483648}\nsteps: [ {press: enter} ]\n",
    "E_SCENARIO_SCHEMA",
    /run\.timeout_ms.*at most 2147483647 ms/,
  ],
  [
    "version: 1\nname: x\nrun: {argv: [a]}\nsteps: [ {terminate: {grace_ms: 4294970296}} ]\n",
    "E_SCENARIO_SCHEMA",
    /steps/,
  ],
  [
    "version: 1\nname: x\nrun: {argv: [a]}\nsteps: [ {wait_for: {idle: 2147483648}} ]\n",
    "E_SCENARIO_SCHEMA",
    /steps/,
  ],
  [
    "version: 1\nname: x\nrun: {argv: [a]}\nsteps: [ {wait_for: {screen_stable: 1e300}} ]\n",
    "E_SCENARIO_SCHEMA",
    /steps/,
  ],
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
  // A regex that does not compile is refused when the scenario loads, naming the field.
  [
    "version: 1\nname: x\nrun: {argv: [a]}\nsteps: [ {wait_for: {regex: '(unclosed'}} ]\n",
    "E_SCENARIO_SCHEMA",
    /steps/,
  ],
  [
    "version: 1\nname: x\nrun: {argv: [a]}\nsteps: [ {wait_for: {prompt: '[z-a]'}} ]\n",
    "E_SCENARIO_SCHEMA",
    /steps/,
  ],
  [
    "version: 1\nname: x\nrun: {argv: [a]}\nsteps: [ {expect: {screen_matches: '*'}} ]\n",
    "E_SCENARIO_SCHEMA",
    /steps/,
  ],
  [
    "version: 1\nname: x\nrun: {argv: [a], normalize: [{pattern: 'a{2,1}', replacement: b}]}\n" +
    "steps: [ {press: enter} ]\n",
    "E_SCENARIO_SCHEMA",
    /run\.normalize/,
  ],
  // Billion laughs: nine levels of nine aliases each would expand to 9^9 strings.
  [
    "version: 1\nname: x\nrun: {argv: [a]}\nsteps: [ {press: enter} ]\n" +
    "a0: &a0 [x, x, x, x, x, x, x, x, x]\n" +
    Array.from({ length: 8 }, (_, i) => `a${i + 1}: &a${i + 1} [${Array(9).fill(`*a${i}`).join(", ")}]\n`)
      .join(""),
    "E_SCENARIO_PARSE",
    /dereferences more than 100 aliases/,
  ],
  // Nested collection keys: toJS() prints each key at every level (minutes for 432 levels).
  ["? ".repeat(432), "E_SCENARIO_PARSE", /a key is not a plain value/],
  [
    "version: 1\nname: x\nrun: {argv: [a]}\nsteps: []\n[a]: b\n",
    "E_SCENARIO_PARSE",
    /a key is not a plain value/,
  ],
  ["version: 1\nname: x\nrun: {argv: [a]}\nsteps: []\nx: &k y\n*k : z\n", "E_SCENARIO_PARSE", /not a plain/],
  // Deeper than any scenario, shallower than the parser's stack.
  [
    "version: 1\nname: x\nsteps: " + "[".repeat(65) + "]".repeat(65) + "\n",
    "E_SCENARIO_PARSE",
    /nests deeper than 64 levels/,
  ],
  // Nesting deeper than the parser's stack.
  [
    "version: 1\nname: x\nsteps: " + "[".repeat(100_000) + "]".repeat(100_000) + "\n",
    "E_SCENARIO_PARSE",
    /./,
  ],
];

Deno.test("a scenario nested 64 levels deep is accepted as far as its shape goes", () => {
  const text = "version: 1\nname: x\nrun: {argv: [a]}\nsteps: []\nx: " + "[".repeat(63) + "]".repeat(63) +
    "\n";
  assert.throws(
    () => parseScenario(text),
    (e: unknown) => (e as { code: string }).code === "E_SCENARIO_SCHEMA",
  );
});

Deno.test("432 nested ? keys are refused within a second", () => {
  const started = performance.now();
  assert.throws(() => parseScenario("? ".repeat(432)), /a key is not a plain value/);
  assert.ok(performance.now() - started < 1000, `took ${performance.now() - started} ms`);
});

Deno.test("a map of 40,000 keys is checked in linear time (the library's own check took 90 s)", () => {
  const text = "version: 1\nname: x\nrun: {argv: [a]}\nsteps: []\nextra:\n" +
    Array.from({ length: 40_000 }, (_, i) => `  k${i}: 1\n`).join("") + "  k7: 2\n";
  const started = performance.now();
  assert.throws(() => parseScenario(text), (e: unknown) => {
    const error = e as { code: string; message: string; details: { line: number } };
    return error.code === "E_SCENARIO_PARSE" && /"k7" appears twice/.test(error.message) &&
      error.details.line === 40_006;
  });
  // Generous for a loaded machine: linear is about a second here, quadratic was 90.
  assert.ok(performance.now() - started < 15_000, `took ${Math.round(performance.now() - started)} ms`);
});

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

Deno.test("loadScenario: FIFOs, devices, directories and huge files are typed errors, never a hang", async () => {
  const dir = await Deno.makeTempDir({ prefix: "specter-scenario-" });
  try {
    new Deno.Command("mkfifo", { args: [`${dir}/fifo.yaml`] }).outputSync();
    await Deno.symlink("/dev/zero", `${dir}/zero.yaml`);
    await Deno.mkdir(`${dir}/dir.yaml`);
    await Deno.writeFile(`${dir}/huge.yaml`, new Uint8Array(MAX_SCENARIO_FILE_BYTES + 1));
    await Deno.writeFile(`${dir}/latin1.yaml`, new Uint8Array([0x6e, 0x61, 0x6d, 0x65, 0x3a, 0xe9]));
    const cases = [
      ["fifo.yaml", "E_FILE_TYPE"],
      ["zero.yaml", "E_FILE_TYPE"],
      ["dir.yaml", "E_FILE_TYPE"],
      ["huge.yaml", "E_FILE_TOO_LARGE"],
      ["latin1.yaml", "E_SCENARIO_PARSE"],
      ["missing.yaml", "E_PATH_NOT_FOUND"],
    ] as const;
    const started = performance.now();
    for (const [name, code] of cases) {
      await assert.rejects(
        loadScenario(`${dir}/${name}`),
        (e: unknown) => (e as { code: string }).code === code,
      );
    }
    assert.ok(performance.now() - started < 3000);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a key that is a collection prints nothing to stderr (the file's text is untrusted)", async () => {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `import { parseScenario } from "${new URL("./load.ts", import.meta.url).href}";
       try { parseScenario("? [\\"\\\\u001b]0;pwned\\\\u0007\\"]\\n: 1\\n"); } catch (e) { console.log(e.code); }`,
    ],
    cwd: new URL("../../", import.meta.url).pathname,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const { stdout, stderr } = await child.output();
  assert.equal(new TextDecoder().decode(stderr), "");
  assert.equal(new TextDecoder().decode(stdout).trim(), "E_SCENARIO_PARSE");
});
