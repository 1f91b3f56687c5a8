import assert from "node:assert/strict";
import { parseScenario } from "../scenario/mod.ts";
import { waitingFor, WaitNotice } from "./wait_notice.ts";

const SCENARIO = `
version: 1
name: waits
run: { argv: [/bin/sh] }
steps:
  - wait_for: { text: "ready" }
  - type: "x"
  - wait_for: { regex: "done\\\\s*$" }
`;

Deno.test("waitingFor says what a wait_for step waits for", () => {
  const { scenario } = parseScenario(SCENARIO);
  assert.equal(waitingFor(scenario.steps[0]!), 'text "ready"');
  assert.equal(waitingFor(scenario.steps[1]!), undefined);
  assert.equal(waitingFor(scenario.steps[2]!), 'regex "done\\\\s*$"');
});

Deno.test("WaitNotice speaks once per waiting step, only while it waits", async () => {
  const { scenario, stepLines } = parseScenario(SCENARIO);
  const lines: string[] = [];
  const notice = new WaitNotice(scenario.steps, stepLines, (text) => lines.push(text), 30);
  await new Promise((resolve) => setTimeout(resolve, 80));
  assert.equal(lines.length, 1, lines.join("\n"));
  assert.match(lines[0]!, /step 1 \(line \d+\): still waiting for text "ready"/);
  notice.stepEnded(0); // The next step is a send: no notice.
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(lines.length, 1);
  notice.stepEnded(1);
  notice.stepEnded(2); // Matched in time: nothing said.
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(lines.length, 1);
  notice.stop();
});
