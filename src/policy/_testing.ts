/**
 * A `Policy` value for unit tests of code that consumes policies (plans, realization). Not validated:
 * `spawn` refuses such objects; pure functions take them as they are.
 *
 * @module
 */
import type { Policy } from "./types.ts";

/** A strict-looking policy (nothing granted, no budgets) with `overrides` applied. */
export function testPolicy(overrides: Partial<Policy> = {}): Policy {
  return {
    version: 1,
    source: "test",
    exec: [],
    fs: { read: [], write: [] },
    env: [],
    network: "off",
    budgets: {
      wall_ms: null,
      cpu_seconds: null,
      memory_bytes: null,
      processes: null,
      output_bytes: null,
      file_size_bytes: null,
    },
    replay: { normalize: null, redactions: [] },
    ...overrides,
  };
}
