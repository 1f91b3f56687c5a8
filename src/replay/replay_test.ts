import assert from "node:assert/strict";
import { SpecterError } from "../errors.ts";
import { NORMALIZATION_FILTERS, type ReplaySettings } from "../policy/mod.ts";
import { resolveNormalization } from "./replay.ts";

const all = NORMALIZATION_FILTERS.map((f) => f.name);
const redaction = { pattern: "token=\\w+", replacement: "token=<redacted>" };

Deno.test("resolveNormalization: defaults, flags and scenario redactions, each with its source", () => {
  assert.deepEqual(resolveNormalization({}, []), {
    filters: { value: all, source: "default" },
    redactions: { value: [], source: "default" },
  });
  assert.deepEqual(resolveNormalization({}, [redaction]).redactions, {
    value: [redaction],
    source: "scenario run.normalize",
  });
  assert.deepEqual(resolveNormalization({ normalize: "all" }, []).filters, {
    value: all,
    source: "flag --normalize",
  });
  assert.deepEqual(resolveNormalization({ normalize: "none" }, [redaction]), {
    filters: { value: [], source: "flag --normalize" },
    redactions: { value: [redaction], source: "scenario run.normalize" },
  });
  assert.deepEqual(resolveNormalization({ normalize: " pids,durations" }, []).filters.value, [
    "pids",
    "durations",
  ]);
  assert.deepEqual(resolveNormalization({ strict: true }, [redaction]), {
    filters: { value: [], source: "flag --strict" },
    redactions: { value: [], source: "flag --strict" },
  });
});

Deno.test("resolveNormalization: an unknown filter is a usage error naming it", () => {
  assert.throws(
    () => resolveNormalization({ normalize: "pids,nope" }, []),
    (e: unknown) => e instanceof SpecterError && e.code === "E_USAGE" && e.message.includes('"nope"'),
  );
});

Deno.test("resolveNormalization: the policy's replay settings sit between the flags and the defaults", () => {
  const policy: ReplaySettings = {
    normalize: ["pids"],
    redactions: [{ pattern: "secret", replacement: "<s>" }],
  };
  assert.deepEqual(resolveNormalization({}, [redaction], policy), {
    filters: { value: ["pids"], source: "policy replay.normalize" },
    redactions: {
      value: [redaction, policy.redactions[0]],
      source: "scenario run.normalize + policy replay.redactions",
    },
  });
  assert.deepEqual(resolveNormalization({ normalize: "all" }, [], policy).filters, {
    value: all,
    source: "flag --normalize",
  });
  assert.deepEqual(
    resolveNormalization({}, [], { normalize: null, redactions: [] }).filters.source,
    "default",
  );
  assert.deepEqual(resolveNormalization({ strict: true }, [], policy).redactions, {
    value: [],
    source: "flag --strict",
  });
});
