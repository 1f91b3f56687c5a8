/**
 * The short CI pass of `deno task fuzz`: every target for a few thousand cases (a thousand for the
 * terminal model, which parses each case in xterm, and for the frame log, whose cases write files), with a
 * fixed seed, 0 crashes and 0 hangs. Also shows
 * that the harness itself reports crashes and hangs with a repro, and replays a case exactly.
 */
import assert from "node:assert/strict";
import { cpuMs } from "./_common.ts";
import { Prng } from "./_prng.ts";
import { caseInput, runCases, targetNamed } from "./run.ts";
import { Crash, type FuzzTarget, TARGETS } from "./targets.ts";
import { removeScratch } from "./targets_files.ts";

globalThis.addEventListener("unload", removeScratch);

const CASES: Readonly<Record<string, number>> = {
  driver: 3000,
  policy: 2000,
  scenario: 1000,
  cast: 3000,
  terminal: 1000,
  seccomp: 2000,
  http_head: 3000,
  ws_frame: 3000,
  daemon_message: 3000,
  keeper_message: 3000,
  frame_store: 1000,
  token_file: 2000,
  remote_json: 2000,
  mcp_message: 3000,
  mcp_http: 2000,
  net_proxy_head: 3000,
};

for (const target of TARGETS) {
  Deno.test(`fuzz: ${target.name}, ${CASES[target.name] ?? 500} cases, no crash and no hang`, async () => {
    const report = await runCases(target, {
      seed: 20261125,
      from: 0,
      count: CASES[target.name] ?? 500,
      // Generous for a loaded CI machine: the bound catches super-linear work, not noise.
      caseMs: 5000,
      deadline: Infinity,
    });
    assert.equal(report.cases, CASES[target.name] ?? 500);
    assert.deepEqual(
      report.failures.map((f) =>
        `${f.kind} case ${f.index}: ${f.message} ${JSON.stringify(f.input.slice(0, 200))}`
      ),
      [],
    );
  });
}

Deno.test("fuzz: cases are deterministic from seed, target and index, and differ between them", () => {
  for (const target of TARGETS) {
    assert.equal(caseInput(target, 7, 123), caseInput(target, 7, 123), target.name);
    const inputs = new Set(Array.from({ length: 20 }, (_, i) => caseInput(target, 7, i)));
    assert.ok(inputs.size >= 15, `${target.name}: only ${inputs.size} distinct inputs of 20`);
    assert.notEqual(caseInput(target, 7, 5), caseInput(target, 8, 5));
  }
  const a = new Prng(1, 2);
  const b = new Prng(1, 2);
  assert.deepEqual(Array.from({ length: 5 }, () => a.u32()), Array.from({ length: 5 }, () => b.u32()));
  assert.throws(() => targetNamed("nope"), /Unknown fuzz target "nope"/);
});

Deno.test("fuzz: an untyped error, a failed property and a slow case are each reported with their index", async () => {
  const planted: FuzzTarget = {
    name: "planted",
    about: "test",
    generate: (rng) => String(rng.below(4)),
    run(input) {
      if (input === "0") throw new TypeError("untyped");
      if (input === "1") throw new Crash("property");
      if (input === "2") {
        // 30 ms of CPU (the bound is CPU time: on a loaded machine 30 ms of wall time may be far less).
        const until = cpuMs() + 30;
        while (cpuMs() < until) { /* busy: a slow case */ }
      }
    },
  };
  const report = await runCases(planted, { seed: 1, from: 0, count: 40, caseMs: 20, deadline: Infinity });
  const kinds = new Set(report.failures.map((f) => `${f.kind}:${f.input}`));
  assert.deepEqual([...kinds].sort(), ["crash:0", "crash:1", "hang:2"]);
  for (const failure of report.failures) assert.equal(caseInput(planted, 1, failure.index), failure.input);
});
