import assert from "node:assert/strict";
import {
  decodeBundleChecksums,
  decodeResolvedScenario,
  encodeBundleChecksums,
  encodeResolvedScenario,
} from "./bundle.ts";

Deno.test("encodeBundleChecksums → decodeBundleChecksums round-trips, pretty with a final newline", () => {
  const sums = { "events.ndjson": "ab".repeat(32), "snapshots/link.json": "!E_PATH_SYMLINK" };
  const text = encodeBundleChecksums(sums);
  assert.equal(text, JSON.stringify(sums, null, 2) + "\n");
  assert.deepEqual(decodeBundleChecksums(text), { value: sums });
});

Deno.test("decodeBundleChecksums: not JSON, not an object, or a digest that is not a string is a problem", () => {
  assert.deepEqual(decodeBundleChecksums("{"), { problem: "is not valid JSON" });
  for (const text of ["[1]", "null", '{"run.json":1}']) {
    const decoded = decodeBundleChecksums(text);
    assert.ok("problem" in decoded, text);
    assert.match(decoded.problem, /^is not an object of digests \(field "/);
  }
});

Deno.test("encodeResolvedScenario → decodeResolvedScenario round-trips in the caller's key order", () => {
  const scenario = {
    version: 1,
    name: "menu",
    run: { argv: ["./menu"] },
    steps: [],
    source: "/s/menu.yaml",
    workspace_dir: "/tmp/ws",
  };
  const text = encodeResolvedScenario(scenario);
  assert.equal(text, JSON.stringify(scenario, null, 2) + "\n");
  assert.deepEqual(decodeResolvedScenario(text), { value: scenario });
  assert.throws(() => encodeResolvedScenario({ ...scenario, source: "relative.yaml" }));
});

Deno.test("decodeResolvedScenario: a malformed file is a problem naming the field", () => {
  assert.deepEqual(decodeResolvedScenario("nope"), { problem: "is not valid JSON" });
  assert.deepEqual(decodeResolvedScenario("null"), { problem: "is not a scenario" });
  assert.deepEqual(decodeResolvedScenario('{"name":"x"}'), {
    problem: 'is not a valid scenario (field "source")',
  });
  assert.deepEqual(decodeResolvedScenario('{"source":"/s.yaml","workspace_dir":"ws"}'), {
    problem: 'is not a valid scenario (field "workspace_dir")',
  });
});
